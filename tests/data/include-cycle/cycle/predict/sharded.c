#include "predict/sharded.h"
