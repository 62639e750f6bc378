/* a header with no .c of its own */
typedef int base_id;
