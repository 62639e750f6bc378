#include "cost/coll.h"
#include "cost/internal.h"
