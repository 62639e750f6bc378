/* the private header names coll by its tag instead of including coll.h */
struct coll;
