// The JSON check of lib/orchestrator/json-check.ts in WebAssembly SIMD128, after simdjson: each
// 64-byte block is classified in four 16-byte vectors into bit masks (quotes, backslashes,
// control characters, whitespace, structural characters); escapes and the inside of strings
// follow from the masks by integer arithmetic (odd backslash runs, prefix XOR of quotes), so that
// string contents, most of the bytes, are never visited one by one. The grammar is checked on
// masks too: each token (bracket, ':', ',', string, number or literal) may only follow tokens of
// certain kinds, and the token after each token of a kind is found for all of them at once by
// one addition (the carry runs from the token to the next one). What is left to walk one by one
// is the brackets (the nesting stack, which tells objects from arrays) and the bytes of numbers
// and literals.
//
// Built by `npm run build:wasm` (clang, wasm32, -msimd128, no libc) into json-check-wasm.ts.
// The module has one page of memory and one instance serves every checker: the TypeScript side
// keeps each checker's state between chunks and copies it in when another checker ran last.
//
// Interface: the caller writes the state (struct state, then the nesting stack) and up to
// INPUT_BYTES bytes at input_address(), then calls check(n): -1 when the bytes continue a valid
// text (the state now follows them), else the offset of the first byte that cannot.
#include <stdint.h>
#include <wasm_simd128.h>

#define INPUT_BYTES 32768
// Deepest nesting this module can follow (the checker falls back to its scalar twin beyond).
#define NEST_BYTES 1024

// The kinds of token whose followers are checked, by what may follow them: the kind of the last
// token is carried from block to block (as a bit of `struct state`'s `last`).
enum {
  T_BEFORE_VALUE, // the document's start, ':' and ',' in an array: a value
  T_OPEN_OBJECT,  // '{': a member name or '}'
  T_OPEN_ARRAY,   // '[': a value or ']'
  T_OBJECT_COMMA, // ',' in an object: a member name
  T_KEY,          // a member name: ':'
  T_VALUE,        // the end of a value: ',', '}' or ']'
  T_KINDS
};
enum { ARRAY = 1, OBJECT = 2 };

// Numbers and literals, byte by byte: the states after each prefix.
enum {
  S_NONE, S_MINUS, S_ZERO, S_INT, S_DOT, S_FRACTION, S_EXP_MARK, S_EXP_SIGN, S_EXPONENT,
  S_T1, S_T2, S_T3, S_F1, S_F2, S_F3, S_F4, S_N1, S_N2, S_N3, S_DONE, S_COUNT,
  S_ERROR = 0xff
};

struct state {
  uint64_t in_string;    // all ones when the next byte is inside a string
  uint64_t hex_next;     // which of the next bytes must be hex digits (of a \u escape), bit 0 first
  uint32_t escaped_next; // 1 when the next byte is escaped by a backslash
  uint32_t last;         // bit T_*: the kind of the last token
  uint32_t scalar;       // S_*: the number or literal being read
  uint32_t depth;
  uint32_t max_depth;
  uint32_t unused;
};

static struct state state;
// The open levels (OBJECT or ARRAY), levels[1] the outermost; levels[0], the top, is 0.
static uint8_t levels[NEST_BYTES + 2];
static uint8_t input[INPUT_BYTES + 64] __attribute__((aligned(16)));
// scalar_next[s][c]: the state after byte c in state s (S_NONE: the first byte of a value).
static uint8_t scalar_next[S_COUNT][256];
// 1 for the characters a backslash may escape, 2 for 'u' (four hex digits follow).
static uint8_t escape_kind[256];

static uint8_t hex_digit[256];

__attribute__((export_name("input_address"))) uint8_t *input_address(void) { return input; }
__attribute__((export_name("state_address"))) struct state *state_address(void) { return &state; }
__attribute__((export_name("nest_address"))) uint8_t *nest_address(void) { return levels + 1; }

static void set_range(uint8_t s, uint8_t from, uint8_t to, uint8_t next) {
  for (int c = from; c <= to; c++) scalar_next[s][c] = next;
}

static void set_word(const char *word, uint8_t first) {
  scalar_next[S_NONE][(uint8_t)word[0]] = first;
  uint8_t s = first;
  for (int k = 1; word[k] != 0; k++) {
    uint8_t next = word[k + 1] == 0 ? S_DONE : s + 1;
    scalar_next[s][(uint8_t)word[k]] = next;
    s = next;
  }
}

__attribute__((export_name("init"))) void init(void) {
  for (int s = 0; s < S_COUNT; s++) set_range(s, 0, 255, S_ERROR);
  scalar_next[S_NONE]['-'] = S_MINUS;
  scalar_next[S_NONE]['0'] = S_ZERO;
  set_range(S_NONE, '1', '9', S_INT);
  scalar_next[S_MINUS]['0'] = S_ZERO;
  set_range(S_MINUS, '1', '9', S_INT);
  scalar_next[S_ZERO]['.'] = S_DOT;
  scalar_next[S_ZERO]['e'] = scalar_next[S_ZERO]['E'] = S_EXP_MARK;
  set_range(S_INT, '0', '9', S_INT);
  scalar_next[S_INT]['.'] = S_DOT;
  scalar_next[S_INT]['e'] = scalar_next[S_INT]['E'] = S_EXP_MARK;
  set_range(S_DOT, '0', '9', S_FRACTION);
  set_range(S_FRACTION, '0', '9', S_FRACTION);
  scalar_next[S_FRACTION]['e'] = scalar_next[S_FRACTION]['E'] = S_EXP_MARK;
  scalar_next[S_EXP_MARK]['+'] = scalar_next[S_EXP_MARK]['-'] = S_EXP_SIGN;
  set_range(S_EXP_MARK, '0', '9', S_EXPONENT);
  set_range(S_EXP_SIGN, '0', '9', S_EXPONENT);
  set_range(S_EXPONENT, '0', '9', S_EXPONENT);
  set_word("true", S_T1);
  set_word("false", S_F1);
  set_word("null", S_N1);
  const char *escapes = "\"\\/bfnrtu";
  for (int k = 0; escapes[k] != 0; k++) escape_kind[(uint8_t)escapes[k]] = escapes[k] == 'u' ? 2 : 1;
  const char *hex = "0123456789abcdefABCDEF";
  for (int k = 0; hex[k] != 0; k++) hex_digit[(uint8_t)hex[k]] = 1;
}

// Whether a number or literal may end in state s.
static inline int complete(uint32_t s) {
  return s == S_ZERO || s == S_INT || s == S_FRACTION || s == S_EXPONENT || s == S_DONE;
}

static inline uint64_t mask64(v128_t a, v128_t b, v128_t c, v128_t d) {
  return (uint64_t)(uint16_t)wasm_i8x16_bitmask(a) | (uint64_t)(uint16_t)wasm_i8x16_bitmask(b) << 16 |
         (uint64_t)(uint16_t)wasm_i8x16_bitmask(c) << 32 | (uint64_t)(uint16_t)wasm_i8x16_bitmask(d) << 48;
}

// The classes of bytes, each on its own (a mask of one class is made from the four vectors before
// the next class is looked at: few vectors live at once, none spilled to the stack).
static inline v128_t quote_bytes(v128_t v) { return wasm_i8x16_eq(v, wasm_i8x16_splat('"')); }
static inline v128_t backslash_bytes(v128_t v) { return wasm_i8x16_eq(v, wasm_i8x16_splat('\\')); }
// Whitespace and control characters: bytes up to ' ' (which of them are whitespace is worked out
// only for blocks that have control characters).
static inline v128_t low_bytes(v128_t v) { return wasm_i8x16_eq(wasm_u8x16_min(v, wasm_i8x16_splat(' ')), v); }
static inline v128_t control_bytes(v128_t v) { return wasm_i8x16_eq(wasm_u8x16_min(v, wasm_i8x16_splat(0x1f)), v); }
// '[' and ']' are '{' and '}' with bit 5 set (no other byte is).
static inline v128_t bracket_bytes(v128_t v) {
  v128_t curly = wasm_v128_or(v, wasm_i8x16_splat(0x20));
  return wasm_v128_or(wasm_i8x16_eq(curly, wasm_i8x16_splat('{')), wasm_i8x16_eq(curly, wasm_i8x16_splat('}')));
}
static inline v128_t colon_bytes(v128_t v) { return wasm_i8x16_eq(v, wasm_i8x16_splat(':')); }
static inline v128_t comma_bytes(v128_t v) { return wasm_i8x16_eq(v, wasm_i8x16_splat(',')); }

// Whitespace among bytes up to ' ': a table on the low nibble that holds each whitespace byte at its
// own nibble (and bytes that match no byte with that nibble elsewhere).
static inline v128_t whitespace(v128_t v) {
  const v128_t table = wasm_i8x16_make(' ', 100, 100, 100, 17, 100, 113, 2, 100, '\t', '\n', 112, 100, '\r', 100, 100);
  return wasm_i8x16_eq(wasm_i8x16_swizzle(table, wasm_v128_and(v, wasm_i8x16_splat(0x0f))), v);
}

#define ODD_BITS 0xaaaaaaaaaaaaaaaaULL

// The bytes escaped by a backslash (simdjson's escape scanner): `*next` carries an escape at the
// block's last byte (byte n - 1) into the next block.
static inline uint64_t escaped_bytes(uint64_t backslash, uint32_t *next, unsigned n) {
  // No branch for blocks without backslashes: the arithmetic gives `carried` for them.
  uint64_t carried = *next;
  uint64_t potential = backslash & ~carried;
  uint64_t codes = (((potential << 1) | ODD_BITS) - potential) ^ ODD_BITS;
  uint64_t escape = codes & backslash;
  *next = (uint32_t)((escape >> (n - 1)) & 1);
  return codes ^ (backslash | carried);
}

static inline uint64_t prefix_xor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

// The token that follows each of `x` (tokens of one kind) among `tokens`: the carry of the
// addition runs from the bit after each one through the gaps to the next token. Bit `kind` of
// `last` brings in a token of the kind before the block; the same bit of `*next` takes out the
// last one's when its follower is beyond.
static inline uint64_t follow(uint64_t x, uint64_t gaps, uint64_t tokens, uint32_t last, int kind, uint32_t *next) {
  uint64_t a = x << 1 | ((last >> kind) & 1);
  uint64_t sum = a + gaps;
  *next |= ((uint32_t)(x >> 63) | (sum < a)) << kind;
  return sum & tokens;
}

// The numbers and literals of a block, byte by byte: those that start at `starts` and one going
// on from the previous block (`*state` is not S_NONE). Returns the offset of a byte that cannot
// be, or -1. Apart from the block's check, whose values would otherwise wait on the stack.
__attribute__((noinline)) static int scalars_of(const uint8_t *b, unsigned n, uint64_t scalar, uint64_t starts, uint32_t *state) {
  uint32_t sc = *state;
  unsigned at = 0;
  if (sc != S_NONE) goto run;
  while (starts != 0) {
    at = (unsigned)__builtin_ctzll(starts);
    starts &= starts - 1;
    sc = S_NONE;
  run:
    // Its bytes are the next ones set in `scalar`.
    while (at < n && ((scalar >> at) & 1)) {
      sc = scalar_next[sc][b[at]];
      if (sc == S_ERROR) return (int)at;
      at++;
    }
    if (at < n) {
      // It ends at byte `at`.
      if (!complete(sc)) return (int)at;
      sc = S_NONE;
    }
  }
  *state = sc;
  return -1;
}

static inline unsigned first(uint64_t x) { return x == 0 ? 64 : (unsigned)__builtin_ctzll(x); }

// Checks the block's first n bytes (1..64; bytes n..63 are zero). Returns the offset of the first
// byte in error, or -1.
static inline int block(const uint8_t *b, unsigned n, struct state *s) {
  uint64_t valid = n == 64 ? ~0ULL : (1ULL << n) - 1;
  v128_t v0 = wasm_v128_load(b), v1 = wasm_v128_load(b + 16), v2 = wasm_v128_load(b + 32), v3 = wasm_v128_load(b + 48);
#define MASK(class) mask64(class(v0), class(v1), class(v2), class(v3))
  uint64_t quote = MASK(quote_bytes);
  uint64_t backslash = MASK(backslash_bytes);
  uint64_t bracket = MASK(bracket_bytes);
  uint64_t colon = MASK(colon_bytes);
  uint64_t comma = MASK(comma_bytes);
  uint64_t low = MASK(low_bytes);
  // Not a byte of a number or literal (outside strings).
  uint64_t other = ~(low | quote | bracket | colon | comma);
  // Control characters are rare in JSON but for line breaks and tabs; outside strings, the others
  // are errors (as bytes of no token, they would not be seen).
  uint64_t control = 0, stray = 0;
  if (wasm_v128_any_true(control_bytes(wasm_u8x16_min(wasm_u8x16_min(v0, v1), wasm_u8x16_min(v2, v3))))) {
    control = MASK(control_bytes) & valid;
    stray = control & ~MASK(whitespace);
  }
#undef MASK
  uint64_t escaped = escaped_bytes(backslash, &s->escaped_next, n) & valid;
  uint64_t quotes = quote & ~escaped;
  // Inside a string: from its opening quote (included) to its closing quote (not).
  uint64_t in_string = prefix_xor(quotes) ^ s->in_string;
  s->in_string = (uint64_t)((int64_t)in_string >> 63);

  // Errors inside strings, found over the whole block: control characters, escapes of other
  // characters, \u not followed by four hex digits (which may lie in the next blocks).
  uint64_t errors = (control & in_string) | (stray & ~in_string);
  uint64_t hex = s->hex_next;
  if ((escaped | hex) != 0) {
    uint64_t u = 0;
    for (uint64_t e = escaped; e != 0; e &= e - 1) {
      unsigned at = (unsigned)__builtin_ctzll(e);
      uint64_t kind = escape_kind[b[at]];
      errors |= (uint64_t)(kind == 0) << at;
      u |= (kind >> 1) << at;
    }
    hex |= u << 1 | u << 2 | u << 3 | u << 4;
    uint64_t beyond = u >> 63 | u >> 62 | u >> 61 | u >> 60;
    s->hex_next = n == 64 ? beyond : hex >> n | beyond << (64 - n);
    for (uint64_t h = hex & valid; h != 0; h &= h - 1) {
      unsigned at = (unsigned)__builtin_ctzll(h);
      if (!hex_digit[b[at]]) errors |= 1ULL << at;
    }
  }

  // Tokens, outside strings: a string is its opening quote, a number or literal its first byte.
  uint64_t outside = ~in_string & valid;
  uint64_t strings = quotes & in_string;
  uint64_t colons = colon & outside;
  uint64_t commas = comma & outside;
  uint64_t scalar = other & outside;
  uint32_t sc = s->scalar;
  uint64_t scalars = scalar & ~(scalar << 1 | (sc != S_NONE));

  // The brackets, one by one: the nesting stack, and which positions are in an object or in an
  // array (a bracket itself belongs inside). Without branches but on errors: whether a bracket
  // opens or closes is bit 1 of its byte, whether it is curly bit 5.
  uint64_t opens = 0, curly = 0, in_object = 0, in_array = 0;
  uint32_t depth = s->depth;
  uint32_t place = levels[depth];
  unsigned from = 0;
  for (uint64_t br = bracket & outside; br != 0; br &= br - 1) {
    unsigned at = (unsigned)__builtin_ctzll(br);
    uint32_t c = b[at];
    uint64_t bit = 1ULL << at;
    uint64_t span = (bit << 1) - (1ULL << from);
    uint32_t open = (c >> 1) & 1;
    uint32_t kind = (c & 0x20) != 0 ? OBJECT : ARRAY;
    in_object |= place == OBJECT ? span : 0;
    in_array |= place == ARRAY ? span : 0;
    if (open ? depth == s->max_depth : place != kind) {
      errors |= bit;
      break;
    }
    // Written above the top when it closes: no harm.
    levels[depth + 1] = (uint8_t)kind;
    depth = depth + 2 * open - 1;
    place = levels[depth];
    opens |= open ? bit : 0;
    curly |= kind == OBJECT ? bit : 0;
    from = at + 1;
  }
  if (from < 64) {
    uint64_t span = 0 - (1ULL << from);
    in_object |= place == OBJECT ? span : 0;
    in_array |= place == ARRAY ? span : 0;
  }
  s->depth = depth;
  uint64_t brackets = bracket & outside;
  uint64_t open_objects = opens & curly, open_arrays = opens & ~curly;
  // A closing bracket of the wrong kind was refused above.
  uint64_t closes = brackets & ~opens;

  // The grammar: which kinds of token each kind may be followed by (one at a time, and each
  // carry straight into `last`: fewer values live at once).
  uint64_t tokens = strings | scalars | brackets | colons | commas;
  uint64_t gaps = ~tokens;
  uint64_t values = strings | scalars | opens;
  uint32_t last = s->last, next = 0;
  uint64_t after_open_object = follow(open_objects, gaps, tokens, last, T_OPEN_OBJECT, &next);
  uint64_t after_object_comma = follow(commas & in_object, gaps, tokens, last, T_OBJECT_COMMA, &next);
  errors |= after_open_object & ~(strings | closes);
  errors |= after_object_comma & ~strings;
  // Member names: the strings after '{' and after ',' in an object.
  uint64_t keys = strings & (after_open_object | after_object_comma);
  errors |= follow(keys, gaps, tokens, last, T_KEY, &next) & ~colons;
  errors |= follow((strings & ~keys) | scalars | closes, gaps, tokens, last, T_VALUE, &next) & ~(commas | closes);
  errors |= follow(colons | (commas & in_array), gaps, tokens, last, T_BEFORE_VALUE, &next) & ~values;
  errors |= follow(open_arrays, gaps, tokens, last, T_OPEN_ARRAY, &next) & ~(values | closes);
  errors |= commas & ~(in_object | in_array);
  s->last = next;
  unsigned error_at = first(errors & valid);

  // Numbers and literals, byte by byte (one may go on from the previous block).
  if ((scalar | sc) != 0) {
    int problem = scalars_of(b, n, scalar, scalars & (error_at == 64 ? ~0ULL : (1ULL << error_at) - 1), &sc);
    if (problem >= 0 && (unsigned)problem < error_at) return problem;
  }
  s->scalar = sc;
  return error_at == 64 ? -1 : (int)error_at;
}

__attribute__((export_name("check"))) int check(uint32_t n) {
  if (n > INPUT_BYTES) return 0;
  for (uint32_t i = n; i < ((n + 63) & ~63u); i++) input[i] = 0;
  struct state s = state;
  int problem = -1;
  for (uint32_t from = 0; from < n; from += 64) {
    int at = block(input + from, n - from < 64 ? n - from : 64, &s);
    if (at >= 0) {
      problem = (int)from + at;
      break;
    }
  }
  state = s;
  return problem;
}
