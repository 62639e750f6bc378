#include "predict/predict.h"
#include "predict/sharded.h"
