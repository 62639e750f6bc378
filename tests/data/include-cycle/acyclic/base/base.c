#include <stdio.h>
#include "base/base.h"
#include "base/types.h"
