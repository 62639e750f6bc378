#include "base/base.h"
#include "coarse_plan.h" /* not a module of this tree: not followed */
