/* examples/c_library: a packedfun library in plain C11 that uses nothing but packedfun/c_api.h. */
#include <packedfun/c_api.h>
#include <stdio.h>
#include <string.h>

/* Reads argument `i` as an int64 (bools count), or raises a TypeError naming `fn`. */
static int arg_int(const char* fn, const PFAny* args, int32_t i, int64_t* out) {
  if (args[i].type_index != kPFTypeInt && args[i].type_index != kPFTypeBool) {
    char message[128];
    snprintf(message, sizeof message, "%s: argument %d: expected int, got type index %d", fn,
             (int)i, (int)args[i].type_index);
    return PFErrorSetRaisedFromCStr("TypeError", message);
  }
  *out = args[i].v_int64;
  return 0;
}

static int check_arity(const char* fn, int32_t num_args, int32_t expected) {
  if (num_args == expected) return 0;
  char message[128];
  snprintf(message, sizeof message, "%s: expected %d arguments, got %d", fn, (int)expected,
           (int)num_args);
  return PFErrorSetRaisedFromCStr("TypeError", message);
}

/* add(a, b) -> a + b, exported as the packed function `add` (found by load_module). */
PACKEDFUN_EXPORT int __packedfun_add(void* self, const PFAny* args, int32_t num_args,
                                     PFAny* result) {
  (void)self;
  int64_t a, b;
  if (check_arity("add", num_args, 2) || arg_int("add", args, 0, &a) ||
      arg_int("add", args, 1, &b)) {
    return -1;
  }
  result->type_index = kPFTypeInt;
  result->zero_padding = 0;
  result->v_int64 = a + b;
  return 0;
}

/* The docstring of `add`, read by Module.get_function / mod.add.__doc__. */
PACKEDFUN_EXPORT const char* __packedfun_doc__add = "add(a, b) -> int: the sum of two integers.";

/* greet(name) -> "Hello, <name>!" (a new string owned by the caller). */
PACKEDFUN_EXPORT int __packedfun_greet(void* self, const PFAny* args, int32_t num_args,
                                       PFAny* result) {
  (void)self;
  if (check_arity("greet", num_args, 1)) return -1;
  const PFAny* name = &args[0];
  const char* text = NULL;
  size_t size = 0;
  if (name->type_index == kPFTypeRawStr) {
    text = name->v_c_str;
    size = strlen(text);
  } else if (name->type_index == kPFTypeStrView) {
    const PFByteArray* view = (const PFByteArray*)name->v_ptr;
    text = view->data;
    size = view->size;
  } else if (name->type_index == kPFTypeSmallStr) {
    text = name->v_bytes;
    size = name->small_len;
  } else if (name->type_index == kPFTypeString) {
    const PFBytesObject* s = (const PFBytesObject*)name->v_obj;
    text = s->bytes.data;
    size = s->bytes.size;
  } else {
    return PFErrorSetRaisedFromCStr("TypeError", "greet: argument 0: expected str");
  }
  char buffer[256];
  int n = snprintf(buffer, sizeof buffer, "Hello, %.*s!", (int)(size > 200 ? 200 : size), text);
  PFByteArray bytes = {buffer, (size_t)n};
  return PFStringCreate(&bytes, result);
}

PACKEDFUN_EXPORT const char* __packedfun_doc__greet = "greet(name) -> str: a greeting.";

/* Calling the module itself, `mod(a, b)`, calls `add`. */
PACKEDFUN_EXPORT const char* __packedfun_main__ = "add";

/* mul(a, b) -> a * b: registered in the GLOBAL registry when the library is loaded. */
static int mul(void* self, const PFAny* args, int32_t num_args, PFAny* result) {
  (void)self;
  int64_t a, b;
  if (check_arity("c_library.mul", num_args, 2) || arg_int("c_library.mul", args, 0, &a) ||
      arg_int("c_library.mul", args, 1, &b)) {
    return -1;
  }
  result->type_index = kPFTypeInt;
  result->zero_padding = 0;
  result->v_int64 = a * b;
  return 0;
}

/* Static initialization, as C++'s PACKEDFUN_REGISTER_GLOBAL does it: runs once per process when
 * the library is first loaded (loading the same path again maps the same copy). */
__attribute__((constructor)) static void register_globals(void) {
  PFObject* func = NULL;
  static const char name[] = "c_library.mul";
  static const char doc[] = "c_library.mul(a, b) -> int: the product of two integers.";
  PFByteArray name_view = {name, sizeof name - 1};
  PFByteArray doc_view = {doc, sizeof doc - 1};
  if (PFFunctionCreate(NULL, &mul, NULL, &func) != 0 ||
      PFFunctionSetGlobal(&name_view, func, 0, &doc_view) != 0) {
    PFObject* error = NULL; /* nowhere to report from a constructor: drop the error */
    PFErrorMoveFromRaised(&error);
    PFObjectDecRef(error);
  }
  PFObjectDecRef(func);
}
