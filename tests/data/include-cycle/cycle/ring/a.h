/* "b.h" resolves against this file's own directory: ring/b. */
#include "b.h"
