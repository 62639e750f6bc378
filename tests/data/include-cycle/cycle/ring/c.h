  #  include "ring/a.h"
