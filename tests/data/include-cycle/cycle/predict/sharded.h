#include "predict/predict.h"
