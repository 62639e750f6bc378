#include "top/top.h"
#include "left/left.h"
#include "right/right.h"
