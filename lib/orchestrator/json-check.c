// The JSON check of lib/orchestrator/json-check.ts in WebAssembly SIMD128, after simdjson: each
// 64-byte block is classified in four 16-byte vectors into bit masks (quotes, backslashes,
// control characters, whitespace, structural characters); escapes and the inside of strings
// follow from the masks by integer arithmetic (odd backslash runs, prefix XOR of quotes), so that
// string contents, most of the bytes, are never visited one by one. What is left to walk, bit by
// bit, is the structure: brackets, ':' and ',', string starts and the bytes of numbers and
// literals, checked by the grammar automaton below.
//
// Built by `npm run build:wasm` (clang, wasm32, -msimd128, no libc) into json-check-wasm.ts.
// The module has one page of memory: a checker's state lives here only while it runs, the
// TypeScript side saving it between chunks, so that one instance serves every checker.
//
// Interface: the caller writes the state (struct state, then the nesting stack) and up to
// INPUT_BYTES bytes at input_address(), then calls check(n): -1 when the bytes continue a valid
// text (the state now follows them), else the offset of the first byte that cannot.
#include <stdint.h>
#include <wasm_simd128.h>

#define INPUT_BYTES 32768
// Deepest nesting this module can follow (the checker falls back to its scalar twin beyond).
#define NEST_BYTES 1024

// What the grammar expects next, outside strings, numbers and literals, and where: at the top
// level, in an array or in an object (the AFTER_* states, in the order of the nesting stack's codes).
enum {
  G_VALUE_TOP,       // document start
  G_VALUE_ARRAY,     // after ',' in an array
  G_VALUE_OBJECT,    // after ':'
  G_VALUE_OR_CLOSE,  // after '['
  G_MEMBER_OR_CLOSE, // after '{'
  G_MEMBER,          // after ',' in an object
  G_COLON,           // after a member name (also while in that name)
  G_AFTER_TOP,       // after a value (also while in a string or a number that is one)
  G_AFTER_ARRAY,
  G_AFTER_OBJECT,
  G_COUNT
};
// What a byte that starts a token does (its class, C_*) in each state: the next state, or one of
// the A_* actions.
enum { C_OPEN_OBJECT, C_OPEN_ARRAY, C_CLOSE_OBJECT, C_CLOSE_ARRAY, C_COLON, C_COMMA, C_QUOTE, C_OTHER, C_COUNT };
enum { A_PUSH_OBJECT = 0x10, A_PUSH_ARRAY, A_POP, A_SCALAR, A_ERROR };
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
  uint32_t grammar;      // G_*
  uint32_t scalar;       // S_*: the number or literal being read
  uint32_t depth;
  uint32_t max_depth;
  uint32_t unused;
};

static struct state state;
static uint8_t nest[NEST_BYTES];
static uint8_t input[INPUT_BYTES + 64] __attribute__((aligned(16)));
// scalar_next[s][c]: the state after byte c in state s (S_NONE: the first byte of a value).
static uint8_t scalar_next[S_COUNT][256];
static uint8_t escape_char[256];
static uint8_t token_class[256];
static uint8_t grammar_next[G_COUNT][C_COUNT];
// grammar_next2[g][c1][c2]: the state after two tokens that only move to the next state, else A_ERROR.
static uint8_t grammar_next2[G_COUNT][C_COUNT][C_COUNT];
static uint8_t hex_digit[256];

__attribute__((export_name("input_address"))) uint8_t *input_address(void) { return input; }
__attribute__((export_name("state_address"))) struct state *state_address(void) { return &state; }
__attribute__((export_name("nest_address"))) uint8_t *nest_address(void) { return nest; }

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
  for (int c = 0; c < 256; c++) token_class[c] = C_OTHER;
  token_class['{'] = C_OPEN_OBJECT;
  token_class['['] = C_OPEN_ARRAY;
  token_class['}'] = C_CLOSE_OBJECT;
  token_class[']'] = C_CLOSE_ARRAY;
  token_class[':'] = C_COLON;
  token_class[','] = C_COMMA;
  token_class['"'] = C_QUOTE;
  for (int g = 0; g < G_COUNT; g++) {
    for (int c = 0; c < C_COUNT; c++) grammar_next[g][c] = A_ERROR;
    if (g <= G_VALUE_OR_CLOSE) {
      grammar_next[g][C_OPEN_OBJECT] = A_PUSH_OBJECT;
      grammar_next[g][C_OPEN_ARRAY] = A_PUSH_ARRAY;
      grammar_next[g][C_QUOTE] = G_AFTER_TOP + (g == G_VALUE_TOP ? 0 : g == G_VALUE_OBJECT ? OBJECT : ARRAY);
      grammar_next[g][C_OTHER] = A_SCALAR;
    }
  }
  grammar_next[G_VALUE_OR_CLOSE][C_CLOSE_ARRAY] = A_POP;
  grammar_next[G_MEMBER_OR_CLOSE][C_CLOSE_OBJECT] = A_POP;
  grammar_next[G_MEMBER_OR_CLOSE][C_QUOTE] = G_COLON;
  grammar_next[G_MEMBER][C_QUOTE] = G_COLON;
  grammar_next[G_COLON][C_COLON] = G_VALUE_OBJECT;
  grammar_next[G_AFTER_ARRAY][C_COMMA] = G_VALUE_ARRAY;
  grammar_next[G_AFTER_ARRAY][C_CLOSE_ARRAY] = A_POP;
  grammar_next[G_AFTER_OBJECT][C_COMMA] = G_MEMBER;
  grammar_next[G_AFTER_OBJECT][C_CLOSE_OBJECT] = A_POP;
  for (int g = 0; g < G_COUNT; g++) {
    for (int c1 = 0; c1 < C_COUNT; c1++) {
      for (int c2 = 0; c2 < C_COUNT; c2++) {
        uint8_t next = grammar_next[g][c1];
        grammar_next2[g][c1][c2] = next < G_COUNT ? grammar_next[next][c2] : A_ERROR;
      }
    }
  }
  const char *escapes = "\"\\/bfnrtu";
  for (int k = 0; escapes[k] != 0; k++) escape_char[(uint8_t)escapes[k]] = 1;
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

struct classes {
  v128_t quote, backslash, control, structural, other;
};

static inline struct classes classify(v128_t v) {
  // Whitespace by a table on the low nibble that holds each whitespace byte at its own nibble
  // (and bytes that match no byte with that nibble elsewhere); structural characters likewise,
  // '[' and ']' made '{' and '}' by setting bit 5 (which also makes 0x0c ',' and 0x1a ':': those
  // are control characters, taken out).
  const v128_t ws_table = wasm_i8x16_make(' ', 100, 100, 100, 17, 100, 113, 2, 100, '\t', '\n', 112, 100, '\r', 100, 100);
  const v128_t op_table = wasm_i8x16_make(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ':', '{', ',', '}', 0, 0);
  v128_t low = wasm_v128_and(v, wasm_i8x16_splat(0x0f));
  struct classes k;
  k.quote = wasm_i8x16_eq(v, wasm_i8x16_splat('"'));
  k.backslash = wasm_i8x16_eq(v, wasm_i8x16_splat('\\'));
  k.control = wasm_u8x16_lt(v, wasm_i8x16_splat(0x20));
  v128_t ws = wasm_i8x16_eq(wasm_i8x16_swizzle(ws_table, low), v);
  k.structural = wasm_v128_andnot(wasm_i8x16_eq(wasm_i8x16_swizzle(op_table, low), wasm_v128_or(v, wasm_i8x16_splat(0x20))), k.control);
  // Neither whitespace nor structural nor a quote: a byte of a number or literal outside strings.
  k.other = wasm_v128_not(wasm_v128_or(wasm_v128_or(ws, k.structural), k.quote));
  return k;
}

#define ODD_BITS 0xaaaaaaaaaaaaaaaaULL

// The bytes escaped by a backslash (simdjson's escape scanner): `*next` carries an escape at the
// block's last byte (byte n - 1) into the next block.
static inline uint64_t escaped_bytes(uint64_t backslash, uint32_t *next, unsigned n) {
  uint64_t carried = *next;
  if (backslash == 0) {
    *next = 0;
    return carried;
  }
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

static inline unsigned first(uint64_t x) { return x == 0 ? 64 : (unsigned)__builtin_ctzll(x); }

// Checks the block's first n bytes (1..64; bytes n..63 are zero). Returns the offset of the first
// byte in error, or -1.
static inline int block(const uint8_t *b, unsigned n, struct state *s) {
  uint64_t valid = n == 64 ? ~0ULL : (1ULL << n) - 1;
  struct classes k0 = classify(wasm_v128_load(b));
  struct classes k1 = classify(wasm_v128_load(b + 16));
  struct classes k2 = classify(wasm_v128_load(b + 32));
  struct classes k3 = classify(wasm_v128_load(b + 48));
  uint64_t quote = mask64(k0.quote, k1.quote, k2.quote, k3.quote);
  uint64_t backslash = mask64(k0.backslash, k1.backslash, k2.backslash, k3.backslash);
  uint64_t control = mask64(k0.control, k1.control, k2.control, k3.control) & valid;
  uint64_t structural = mask64(k0.structural, k1.structural, k2.structural, k3.structural);
  uint64_t other = mask64(k0.other, k1.other, k2.other, k3.other);

  uint64_t escaped = escaped_bytes(backslash, &s->escaped_next, n) & valid;
  uint64_t quotes = quote & ~escaped;
  // Inside a string: from its opening quote (included) to its closing quote (not).
  uint64_t in_string = prefix_xor(quotes) ^ s->in_string;
  s->in_string = (uint64_t)((int64_t)in_string >> 63);

  // Errors inside strings, found over the whole block: control characters, escapes of other
  // characters, \u not followed by four hex digits (which may lie in the next blocks).
  uint64_t errors = control & in_string;
  uint64_t hex = s->hex_next;
  if ((escaped | hex) != 0) {
    uint64_t u = 0;
    for (uint64_t e = escaped; e != 0; e &= e - 1) {
      unsigned at = (unsigned)__builtin_ctzll(e);
      uint8_t c = b[at];
      if (!escape_char[c]) errors |= 1ULL << at;
      if (c == 'u') u |= 1ULL << at;
    }
    hex |= u << 1 | u << 2 | u << 3 | u << 4;
    uint64_t beyond = u >> 63 | u >> 62 | u >> 61 | u >> 60;
    s->hex_next = n == 64 ? beyond : hex >> n | beyond << (64 - n);
    for (uint64_t h = hex & valid; h != 0; h &= h - 1) {
      unsigned at = (unsigned)__builtin_ctzll(h);
      if (!hex_digit[b[at]]) errors |= 1ULL << at;
    }
  }
  unsigned error_at = first(errors);

  // The structure, in order: structural characters and string starts, and numbers and literals
  // byte by byte (one of them may go on from the previous block).
  uint64_t scalar = other & ~in_string & valid;
  uint32_t sc = s->scalar;
  uint64_t events = (structural & ~in_string) | (quotes & in_string) | (scalar & ~(scalar << 1 | (sc != S_NONE)));
  events &= error_at == 64 ? ~0ULL : (1ULL << error_at) - 1;
  uint32_t g = s->grammar;
  uint32_t depth = s->depth;
  unsigned at = 0;
  int problem = -1;
  if (sc != S_NONE) goto scalar_run;
  while (events != 0) {
    at = (unsigned)__builtin_ctzll(events);
    events &= events - 1;
    uint8_t c = b[at];
    // '"', ':' and ',' (most tokens) only move to the next state: two at a time, when they can
    // (half as many lookups that wait on each other).
    if (events != 0) {
      uint32_t next2 = grammar_next2[g][token_class[c]][token_class[b[__builtin_ctzll(events)]]];
      if (next2 < G_COUNT) {
        g = next2;
        events &= events - 1;
        continue;
      }
    }
    uint32_t next = grammar_next[g][token_class[c]];
    if (next < G_COUNT) {
      g = next;
      continue;
    }
    switch (next) {
      case A_PUSH_OBJECT:
      case A_PUSH_ARRAY:
        if (depth == s->max_depth) goto fail;
        nest[depth++] = next == A_PUSH_OBJECT ? OBJECT : ARRAY;
        g = next == A_PUSH_OBJECT ? G_MEMBER_OR_CLOSE : G_VALUE_OR_CLOSE;
        break;
      case A_POP:
        depth--;
        g = G_AFTER_TOP + (depth == 0 ? 0 : nest[depth - 1]);
        break;
      case A_SCALAR:
        g = G_AFTER_TOP + (depth == 0 ? 0 : nest[depth - 1]);
        sc = scalar_next[S_NONE][c];
        if (sc == S_ERROR) goto fail;
        at++;
      scalar_run:
        // The rest of the number or literal: its bytes are the next ones set in `scalar`.
        while (at < n && ((scalar >> at) & 1)) {
          sc = scalar_next[sc][b[at]];
          if (sc == S_ERROR) goto fail;
          at++;
        }
        if (at < n) {
          // It ends at byte `at` (whitespace or an event that follows).
          if (!complete(sc)) goto fail;
          sc = S_NONE;
        }
        break;
      default:
        goto fail;
    }
  }
  goto done;
fail:
  problem = (int)at;
done:
  s->grammar = g;
  s->depth = depth;
  s->scalar = sc;
  if (error_at < 64 && (problem < 0 || (unsigned)problem > error_at)) problem = (int)error_at;
  return problem;
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
