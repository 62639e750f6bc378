/*
 * mutate.c - one deterministic mutation of a JSON (or any text) file, for
 * the robustness test (tests/robust/mutate.sh).
 *
 * Usage: mutate SEED INDEX < input > mutant
 *
 * The mutation is a pure function of (SEED, INDEX) and the input, so a
 * failing mutant can be rebuilt from the two numbers the test prints.  The
 * kind of mutation cycles with INDEX, so any run of N mutants has about
 * N / KINDS of each; its position and parameters come from a splitmix64
 * stream seeded by both numbers.  One in four mutants gets a second
 * mutation on top.  A one-line description goes to stderr.
 *
 * Kinds: flip bits in a few bytes; overwrite a byte with a JSON
 * metacharacter; cut the file short; duplicate a chunk; delete a chunk;
 * replace a number with an extreme value (1e309, -0, 1e-320, 2^63, ...);
 * rename a key; replace a string value; replace a number with another
 * type.  The number, key and string kinds keep the JSON valid, so the
 * loaders' semantic checks are reached, not only the parser's.
 *
 * Plain C11 and no dependencies: the test machine may have no Python.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Inputs up to 64 MiB; the shipped files are under 100 KB. */
#define MAX_INPUT ((size_t)64 << 20)

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

/* ------------------------------------------------------------------------ */
/* Random numbers: splitmix64 (Steele, Lea, Flood 2014), fixed forever so a
 * (seed, index) pair names the same mutant on every machine. */

static uint64_t rng_state;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, n); n > 0.  The modulo bias is irrelevant here. */
static size_t rng_below(size_t n)
{
    return (size_t)(rng_next() % n);
}

/* ------------------------------------------------------------------------ */
/* Buffer edits */

static void die(const char *msg)
{
    fprintf(stderr, "mutate: %s\n", msg);
    exit(1);
}

static void reserve(buf *b, size_t n)
{
    if (n <= b->cap)
        return;
    b->cap = n * 2 + 64;
    b->p = realloc(b->p, b->cap);
    if (!b->p)
        die("out of memory");
}

/* Flip the bits of `mask` in byte `at`. */
static void xor_byte(buf *b, size_t at, unsigned mask)
{
    unsigned char *u = (unsigned char *)b->p;
    u[at] = (unsigned char)(u[at] ^ mask);
}

/* Replace bytes [at, at + del) with `ins` (ilen bytes). */
static void splice(buf *b, size_t at, size_t del, const char *ins, size_t ilen)
{
    char *copy = NULL;
    if (ilen) {
        copy = malloc(ilen);
        if (!copy)
            die("out of memory");
        memcpy(copy, ins, ilen); /* ins may point into b */
    }
    reserve(b, b->n - del + ilen);
    memmove(b->p + at + ilen, b->p + at + del, b->n - at - del);
    if (ilen)
        memcpy(b->p + at, copy, ilen);
    b->n = b->n - del + ilen;
    free(copy);
}

/* ------------------------------------------------------------------------ */
/* A small JSON lexer: just enough to find numbers, keys and string values. */

typedef struct span {
    size_t at, len;
} span;

typedef struct tokens {
    span *num, *key, *str;
    size_t nnum, nkey, nstr;
} tokens;

static void push(span **arr, size_t *n, size_t at, size_t len)
{
    span *p = realloc(*arr, (*n + 1) * sizeof *p);
    if (!p)
        die("out of memory");
    p[*n].at = at;
    p[*n].len = len;
    *arr = p;
    (*n)++;
}

static int is_num_char(char c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' ||
           c == 'E';
}

static void lex(const buf *b, tokens *tk)
{
    size_t i = 0;
    memset(tk, 0, sizeof *tk);
    while (i < b->n) {
        char c = b->p[i];
        if (c == '"') {
            size_t start = i++, k;
            while (i < b->n && b->p[i] != '"')
                i += b->p[i] == '\\' ? 2 : 1;
            if (i >= b->n)
                return;
            i++;
            for (k = i; k < b->n && (b->p[k] == ' ' || b->p[k] == '\n' || b->p[k] == '\t' ||
                                     b->p[k] == '\r');
                 k++)
                ;
            if (k < b->n && b->p[k] == ':')
                push(&tk->key, &tk->nkey, start + 1, i - start - 2);
            else
                push(&tk->str, &tk->nstr, start + 1, i - start - 2);
        } else if ((c >= '0' && c <= '9') || c == '-') {
            size_t start = i;
            while (i < b->n && is_num_char(b->p[i]))
                i++;
            push(&tk->num, &tk->nnum, start, i - start);
        } else {
            i++;
        }
    }
}

static void free_tokens(tokens *tk)
{
    free(tk->num);
    free(tk->key);
    free(tk->str);
}

/* ------------------------------------------------------------------------ */
/* The mutations.  Each returns 0, or -1 when it does not apply to this
 * input (then the next kind is tried). */

static int m_flip(buf *b, char *what, size_t cap)
{
    int k, times = 1 + (int)rng_below(4);
    size_t at = 0;
    if (!b->n)
        return -1;
    for (k = 0; k < times; k++) {
        at = rng_below(b->n);
        xor_byte(b, at, 1u << rng_below(8));
    }
    snprintf(what, cap, "flip %d bit(s), last at byte %zu", times, at);
    return 0;
}

static int m_meta(buf *b, char *what, size_t cap)
{
    static const char meta[] = "\"{}[],:\\\0\xff-e0.";
    size_t at;
    char c;
    if (!b->n)
        return -1;
    at = rng_below(b->n);
    c = meta[rng_below(sizeof meta - 1)];
    b->p[at] = c;
    snprintf(what, cap, "byte %zu := 0x%02x", at, (unsigned char)c);
    return 0;
}

static int m_cut(buf *b, char *what, size_t cap)
{
    if (!b->n)
        return -1;
    b->n = rng_below(b->n);
    snprintf(what, cap, "cut at byte %zu", b->n);
    return 0;
}

static int m_dup(buf *b, char *what, size_t cap)
{
    size_t at, len, to;
    if (b->n < 2)
        return -1;
    at = rng_below(b->n);
    len = 1 + rng_below(b->n - at < 400 ? b->n - at : 400);
    to = rng_below(b->n + 1);
    splice(b, to, 0, b->p + at, len);
    snprintf(what, cap, "duplicate bytes %zu..%zu at %zu", at, at + len, to);
    return 0;
}

static int m_delete(buf *b, char *what, size_t cap)
{
    size_t at, len;
    if (b->n < 2)
        return -1;
    at = rng_below(b->n);
    len = 1 + rng_below(b->n - at < 200 ? b->n - at : 200);
    splice(b, at, len, "", 0);
    snprintf(what, cap, "delete bytes %zu..%zu", at, at + len);
    return 0;
}

static int m_number(buf *b, char *what, size_t cap)
{
    /* Values at and beyond every limit the loaders enforce (docs/formats.md,
     * docs/hardening.md): overflowing doubles, negative zero, subnormals,
     * 64-bit edges, the 2^40 element limit, the 1e5 GB/s bound. */
    static const char *const extreme[] = {
        "1e309", "-1e309", "-0", "-0.0", "1e-320", "4.9e-324", "0", "-1", "1e308",
        "99999999999999999999999", "9223372036854775807", "9223372036854775808",
        "-9223372036854775809", "18446744073709551616", "2147483648", "4294967296",
        "1099511627776", "1099511627777", "100000", "100001", "1000001", "0.5",
        "1e-300", "123456789012345678901234567890e-10"};
    tokens tk;
    const char *v;
    span s;
    lex(b, &tk);
    if (!tk.nnum) {
        free_tokens(&tk);
        return -1;
    }
    s = tk.num[rng_below(tk.nnum)];
    v = extreme[rng_below(sizeof extreme / sizeof *extreme)];
    splice(b, s.at, s.len, v, strlen(v));
    snprintf(what, cap, "number at byte %zu := %s", s.at, v);
    free_tokens(&tk);
    return 0;
}

static int m_key(buf *b, char *what, size_t cap)
{
    tokens tk;
    span s, other;
    int how;
    lex(b, &tk);
    if (!tk.nkey) {
        free_tokens(&tk);
        return -1;
    }
    s = tk.key[rng_below(tk.nkey)];
    other = tk.key[rng_below(tk.nkey)];
    how = (int)rng_below(4);
    if (how == 0 && s.len > 0) { /* typo */
        xor_byte(b, s.at + rng_below(s.len), 0x20);
    } else if (how == 1) { /* another key of the file: duplicates, wrong places */
        char copy[256];
        size_t n = other.len < sizeof copy ? other.len : sizeof copy;
        memcpy(copy, b->p + other.at, n);
        splice(b, s.at, s.len, copy, n);
    } else if (how == 2) { /* empty key */
        splice(b, s.at, s.len, "", 0);
    } else { /* suffix */
        splice(b, s.at + s.len, 0, "_x", 2);
    }
    snprintf(what, cap, "key at byte %zu renamed (way %d)", s.at, how);
    free_tokens(&tk);
    return 0;
}

static int m_string(buf *b, char *what, size_t cap)
{
    static const char *const values[] = {"", "gpu0", "nvlink", "\\u0000", "\\ud800",
                                         "fp64", "h0/gpu0", "\\\"", "note"};
    char long_name[700];
    tokens tk;
    span s;
    const char *v;
    size_t pick;
    lex(b, &tk);
    if (!tk.nstr) {
        free_tokens(&tk);
        return -1;
    }
    s = tk.str[rng_below(tk.nstr)];
    pick = rng_below(sizeof values / sizeof *values + 1);
    if (pick == sizeof values / sizeof *values) {
        memset(long_name, 'x', sizeof long_name - 1); /* over every name limit */
        long_name[sizeof long_name - 1] = '\0';
        v = long_name;
    } else {
        v = values[pick];
    }
    splice(b, s.at, s.len, v, strlen(v));
    snprintf(what, cap, "string at byte %zu := \"%.20s\"", s.at, v);
    free_tokens(&tk);
    return 0;
}

static int m_type(buf *b, char *what, size_t cap)
{
    static const char *const values[] = {"null", "true", "\"1\"", "[]", "{}", "[1]"};
    tokens tk;
    span s;
    const char *v;
    lex(b, &tk);
    if (!tk.nnum) {
        free_tokens(&tk);
        return -1;
    }
    s = tk.num[rng_below(tk.nnum)];
    v = values[rng_below(sizeof values / sizeof *values)];
    splice(b, s.at, s.len, v, strlen(v));
    snprintf(what, cap, "number at byte %zu := %s", s.at, v);
    free_tokens(&tk);
    return 0;
}

typedef int (*mutation)(buf *, char *, size_t);
static const mutation kinds[] = {m_flip, m_meta, m_cut,    m_dup, m_delete,
                                 m_number, m_key, m_string, m_type};
#define KINDS (sizeof kinds / sizeof *kinds)

/* Apply kind k, or the next one that applies. */
static void apply(buf *b, size_t k, char *what, size_t cap)
{
    size_t tries;
    for (tries = 0; tries < KINDS; tries++)
        if (kinds[(k + tries) % KINDS](b, what, cap) == 0)
            return;
    snprintf(what, cap, "unchanged (empty input)");
}

static void read_all(buf *b)
{
    size_t got;
    memset(b, 0, sizeof *b);
    reserve(b, 65536);
    while ((got = fread(b->p + b->n, 1, b->cap - b->n, stdin)) > 0) {
        b->n += got;
        if (b->n > MAX_INPUT)
            die("input larger than 64 MiB");
        reserve(b, b->n + 65536);
    }
    if (ferror(stdin))
        die("read error");
}

int main(int argc, char **argv)
{
    char what[2][160];
    unsigned long long seed, index;
    char *end;
    buf b;
    if (argc != 3) {
        fprintf(stderr, "usage: mutate SEED INDEX < input > mutant\n");
        return 2;
    }
    seed = strtoull(argv[1], &end, 10);
    if (*end || !*argv[1])
        die("SEED: expected a whole number");
    index = strtoull(argv[2], &end, 10);
    if (*end || !*argv[2])
        die("INDEX: expected a whole number");
    rng_state = seed * 0x100000001b3ULL ^ index;
    (void)rng_next();
    read_all(&b);
    apply(&b, (size_t)(index % KINDS), what[0], sizeof what[0]);
    what[1][0] = '\0';
    if (rng_below(4) == 0)
        apply(&b, rng_below(KINDS), what[1], sizeof what[1]);
    if (fwrite(b.p, 1, b.n, stdout) != b.n || fflush(stdout) != 0)
        die("write error");
    fprintf(stderr, "%s%s%s\n", what[0], what[1][0] ? "; then " : "", what[1]);
    free(b.p);
    return 0;
}
