/* predict.h: the types both files use (the shape src/predict had before issue 13). */
typedef struct prediction { double ms; } prediction;
