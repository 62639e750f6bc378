typedef struct coll { int n; } coll;
