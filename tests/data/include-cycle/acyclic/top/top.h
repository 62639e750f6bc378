#include "left/left.h"
