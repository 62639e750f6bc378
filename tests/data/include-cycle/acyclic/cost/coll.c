#include "cost/internal.h"
#include "cost/coll.h"
