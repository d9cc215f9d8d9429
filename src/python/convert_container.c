/* Python lists, tuples and dicts -> native Array/List/Map/Dict, nested, with the path of a bad
 * element. */
#include "container_view.h"
#include "core.h"
#include "object_system.h"
#include "tensor.h"

#include <string.h>

/* One conversion: who asked (for messages), the containers being converted (cycle detection) and
 * the path of a failing element, collected innermost first while unwinding. */
typedef struct {
  PyObject* fname; /* borrowed, may be NULL */
  Py_ssize_t pos;  /* argument position; negative: a value (convert, return values) */
  PyObject** open; /* containers on the current path: `shallow`, or a PyMem block when deeper */
  int depth, cap;
  PyObject* path;        /* list of segment strs, or NULL before a failure */
  int own_error;         /* the pending exception's message is a bare "what" to prefix */
  PFAny* spare;          /* a buffer lent by the top-level caller (items then views), or NULL */
  Py_ssize_t spare_n;    /* how many items it holds */
  PyObject* shallow[16]; /* `open` for the usual nests: no allocation per conversion */
  int python_keys; /* refuse dict keys no lookup would find as a dict (pfpy_map_key_refused) */
} Ctx;

/* The items of one container under construction: `n` owned PFAny plus StrView/BytesView backing. */
typedef struct {
  PFAny* items;
  PFByteArray* views;
  Py_ssize_t n, filled;
  Py_ssize_t first_other; /* items before it are small ints (nothing to release) */
  int lent;               /* `items` is the caller's spare buffer (not freed here) */
  PFAny small_items[16];
  PFByteArray small_views[16];
} Items;

static int value_from_py(Ctx* ctx, PyObject* o, PFAny* out, PFByteArray* view);

_Static_assert(sizeof(PFByteArray) <= sizeof(PFAny), "a spare buffer's views fit its item slots");

static int items_init(Items* it, Py_ssize_t n, Ctx* ctx) {
  it->n = n;
  it->filled = 0;
  it->first_other = 0;
  it->lent = 0;
  if (n <= 16) {
    it->items = it->small_items;
    it->views = it->small_views;
    return 0;
  }
  if (ctx->spare != NULL && n <= ctx->spare_n) { /* the first large container: no malloc */
    it->items = ctx->spare;
    it->views = (PFByteArray*)(it->items + n);
    it->lent = 1;
    ctx->spare = NULL;
    return 0;
  }
  it->items = (PFAny*)PyMem_Malloc((size_t)n * (sizeof(PFAny) + sizeof(PFByteArray)));
  if (it->items == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  it->views = (PFByteArray*)(it->items + n);
  return 0;
}

/* Releases the owned items (views own nothing) and the buffer. */
static void items_free(Items* it) {
  for (Py_ssize_t i = it->first_other; i < it->filled; ++i) {
    if (it->items[i].type_index >= kPFTypeStaticObjectBegin) PFObjectDecRef(it->items[i].v_obj);
  }
  if (it->items != it->small_items && !it->lent) PyMem_Free(it->items);
}

/* Raises `type` with the message `name` of packedfun._rules.messages (filled with `arg` when not
 * NULL): a bare reason, which decorate_error prefixes with the element's place. */
static PFPY_NOINLINE int own_error(Ctx* ctx, PyObject* type, const char* name, const char* arg) {
  if (arg != NULL) {
    pfpy_raise_message(type, name, "(s)", arg);
  } else {
    pfpy_raise_message(type, name, "()");
  }
  ctx->own_error = 1;
  return -1;
}

/* Records `segment` (stolen) of the path of the element that failed. */
static PFPY_NOINLINE int add_segment(Ctx* ctx, PyObject* segment) {
  if (segment == NULL) return -1;
  PyObject* exc = pfpy_fetch_exception();
  if (ctx->path == NULL) ctx->path = PyList_New(0);
  if (ctx->path != NULL && PyList_Append(ctx->path, segment) != 0) PyErr_Clear();
  Py_DECREF(segment);
  pfpy_restore_exception(exc);
  return -1;
}

/* Records the segment naming the dict key `key`: its repr may run Python code, which must not
 * run with the element's exception pending (a frozenset's or an Enum's repr lost it: SystemError).
 */
static PFPY_NOINLINE int add_key_segment(Ctx* ctx, PyObject* key) {
  PyObject* exc = pfpy_fetch_exception();
  PyObject* segment = PyUnicode_FromFormat("[%R]", key);
  if (segment == NULL) PyErr_Clear();
  pfpy_restore_exception(exc);
  return segment != NULL ? add_segment(ctx, segment) : -1;
}

/* Whether `o` is already open. Near the root every open container is compared (the common, shallow
 * case). Deeper, a full scan would make converting a d-deep nest O(d^2); instead `o` is compared
 * with one ancestor, the one at the last power-of-two depth (Brent's cycle finding): a container
 * that contains itself makes the descent periodic, so the repeat is found within twice the cycle's
 * depth, at O(1) per level. */
static int is_open(const Ctx* ctx, PyObject* o) {
  enum { kScanDepth = 64 };
  int depth = ctx->depth;
  int scan = depth < kScanDepth ? depth : kScanDepth;
  for (int i = 0; i < scan; ++i) {
    if (ctx->open[i] == o) return 1;
  }
  if (depth <= kScanDepth) return 0;
  int anchor = 1;
  while (anchor * 2 <= depth) anchor *= 2;
  return ctx->open[anchor - 1] == o;
}

/* What CPython appends to "maximum recursion depth exceeded" when containers nest too deep: the
 * message CONTAINER_TOO_DEEP, read once (its str is kept, so its UTF-8 stays valid). */
static PFPY_NOINLINE const char* too_deep_where_load(void) {
  static PyObject* text = NULL;
  if (text == NULL) text = pfpy_message("CONTAINER_TOO_DEEP", "()");
  const char* where = text != NULL ? PyUnicode_AsUTF8(text) : NULL;
  if (where == NULL) PyErr_Clear();
  return where;
}

static inline const char* too_deep_where(void) {
  static const char* where = NULL;
  if (PFPY_UNLIKELY(where == NULL) && (where = too_deep_where_load()) == NULL) return "";
  return where;
}

static int enter(Ctx* ctx, PyObject* o) {
  if (is_open(ctx, o)) return own_error(ctx, PyExc_ValueError, "CONTAINER_CONTAINS_ITSELF", NULL);
  if (Py_EnterRecursiveCall(too_deep_where())) return -1;
  if (ctx->depth == ctx->cap) {
    int cap = ctx->cap * 2;
    PyObject** grown = ctx->open == ctx->shallow ? NULL : ctx->open;
    grown = (PyObject**)PyMem_Realloc(grown, (size_t)cap * sizeof(PyObject*));
    if (grown == NULL) {
      Py_LeaveRecursiveCall();
      PyErr_NoMemory();
      return -1;
    }
    if (ctx->open == ctx->shallow) memcpy(grown, ctx->shallow, sizeof(ctx->shallow));
    ctx->open = grown;
    ctx->cap = cap;
  }
  ctx->open[ctx->depth++] = o;
  return 0;
}

static void leave(Ctx* ctx) {
  --ctx->depth;
  Py_LeaveRecursiveCall();
}

/* Builds the native container of `kind` from `it` (items borrowed by the create call). A Map
 * whose keys are `distinct` skips hashing until someone looks a key up (PFMapCreateDistinct). */
static int create(int32_t kind, Items* it, int distinct, PFAny* out) {
  int rc;
  switch (kind) {
    case kPFTypeList:
      rc = PFListCreate(it->items, it->n, out);
      break;
    case kPFTypeMap:
      rc = distinct ? PFMapCreateDistinct(it->items, it->n / 2, out)
                    : PFMapCreate(it->items, it->n / 2, out);
      break;
    case kPFTypeDict:
      rc = PFDictCreate(it->items, it->n / 2, out);
      break;
    default:
      rc = PFArrayCreate(it->items, it->n, out);
      break;
  }
  if (rc != 0) {
    pfpy_raise_native(NULL);
    return -1;
  }
  return 0;
}

/* Converts src[i..] into dst[i..] while the items are small ints; returns where it stopped.
 * Locals only in the loop (no stores the compiler must assume alias the list). The type is
 * checked before the value is read: an object without ob_size (object(), 16 bytes) ends where
 * ob_size would be (a heap-buffer-overflow the sanitized suite reported). */
static Py_ssize_t small_int_run(PyObject* const* src, Py_ssize_t i, Py_ssize_t n, PFAny* dst) {
  for (; i < n; ++i) {
    PyObject* o = src[i];
    int64_t value;
    if (Py_TYPE(o) != &PyLong_Type || !pfpy_compact_int(o, &value)) break;
    dst[i].type_index = kPFTypeInt;
    dst[i].zero_padding = 0;
    dst[i].v_int64 = value;
  }
  return i;
}

/* Makes the str/bytes view in `*cell` (over a buffer the caller keeps alive) an owned value. */
static int own_view(PFAny* cell) {
  int32_t kind = cell->type_index;
  if (kind != kPFTypeStrView && kind != kPFTypeBytesView) return 0;
  const PFByteArray* view = (const PFByteArray*)cell->v_ptr;
  PFPY_SET_POD(cell, kPFTypeNone, v_int64, 0); /* valid whatever happens next */
  PFAny owned;
  int rc = kind == kPFTypeStrView ? PFStringCreate(view, &owned) : PFBytesCreate(view, &owned);
  if (rc != 0) {
    pfpy_raise_native(NULL);
    return -1;
  }
  *cell = owned;
  return 0;
}

/* A list is read as it was when its conversion began: before the first element whose conversion
 * may run Python code (an `__index__`, `__float__`, a key's `__eq__` ...), its items are copied
 * into `*snap` (new refs), and the rest are read from that copy. Code that replaces items cannot
 * free a str an earlier view borrows, and code that changes the list's size raises RuntimeError,
 * as CPython's own iteration does, checked after every such element (the last one included). A
 * tuple cannot change. Both backends follow this rule (docs/calling.md). */
static int take_snapshot(PyObject* o, Py_ssize_t n, PyObject** snap) {
  if (*snap != NULL || !PyList_Check(o)) return 0;
  *snap = PyList_GetSlice(o, 0, n);
  return *snap == NULL ? -1 : 0;
}

static PyObject* const* seq_items(PyObject* o, PyObject* snap) {
  if (snap != NULL) return ((PyListObject*)snap)->ob_item;
  return PyList_Check(o) ? ((PyListObject*)o)->ob_item : ((PyTupleObject*)o)->ob_item;
}

static PFPY_NOINLINE int changed_size(Ctx* ctx, PyObject* o) {
  return own_error(ctx, PyExc_RuntimeError, "CONTAINER_CHANGED_SIZE",
                   PyDict_Check(o) ? "dict" : "list");
}

static inline int size_changed(PyObject* o, Py_ssize_t n) {
  if (PyList_Check(o)) return PyList_GET_SIZE(o) != n;
  return PyDict_Check(o) && PyDict_GET_SIZE(o) != n;
}

/* An Array built in place: PFArrayCreate without items makes an empty Array with room for `n`
 * cells, and each element is converted straight into the next cell as an owned value; no buffer
 * to fill and copy, and a run of small ints is one pass over the list. `size` counts the cells
 * filled so far, so on failure the Array releases exactly what was stored. */
static int array_from_py(Ctx* ctx, PyObject* o, PFAny* out) {
  int is_list = PyList_Check(o);
  Py_ssize_t n = is_list ? PyList_GET_SIZE(o) : PyTuple_GET_SIZE(o);
  PFAny made;
  if (PFArrayCreate(NULL, n, &made) != 0) {
    pfpy_raise_native(NULL);
    return -1;
  }
  PFSeqObject* arr = (PFSeqObject*)made.v_obj;
  PFAny* cells = arr->data;
  PyObject* snap = NULL;
  int rc = 0;
  for (Py_ssize_t i = 0; rc == 0 && i < n; ++i) {
    /* A run of small ints calls no Python code, so the list cannot change under it. */
    i = small_int_run(seq_items(o, snap), i, n, cells);
    arr->size = i;
    if (i == n) break;
    PyObject* item = seq_items(o, snap)[i];
    PFByteArray view;
    if (PFPY_LIKELY(pfpy_exact_from_py(item, &cells[i], &view,
                                       PFPY_EXACT_SMALL_STR))) { /* no call, no refs */
      rc = own_view(&cells[i]);
    } else if ((rc = take_snapshot(o, n, &snap)) == 0) {
      item = seq_items(o, snap)[i]; /* the copy's reference keeps it alive */
      rc = value_from_py(ctx, item, &cells[i], &view);
      if (rc == 0) rc = own_view(&cells[i]); /* `item` still holds the viewed buffer */
      if (rc == 0 && size_changed(o, n)) {
        arr->size = i + 1;
        rc = changed_size(ctx, o);
        break;
      }
    }
    if (rc != 0) {
      add_segment(ctx, PyUnicode_FromFormat("[%zd]", i));
    } else {
      arr->size = i + 1;
    }
  }
  Py_XDECREF(snap);
  if (rc != 0) {
    PFObjectDecRef(made.v_obj); /* releases the `size` cells filled */
    return -1;
  }
  *out = made;
  return 0;
}

static int seq_from_py(Ctx* ctx, PyObject* o, int32_t kind, PFAny* out) {
  if (enter(ctx, o) != 0) return -1;
  if (kind == kPFTypeArray) {
    int rc = array_from_py(ctx, o, out);
    leave(ctx);
    return rc;
  }
  int is_list = PyList_Check(o);
  Py_ssize_t n = is_list ? PyList_GET_SIZE(o) : PyTuple_GET_SIZE(o);
  Items it;
  PyObject* snap = NULL; /* owns the items the views borrow once Python code may run */
  int rc = items_init(&it, n, ctx);
  it.first_other = n;
  for (Py_ssize_t i = 0; rc == 0 && i < n; ++i) {
    /* A run of small ints calls no Python code, so the list cannot change under it. */
    i = small_int_run(seq_items(o, snap), i, n, it.items);
    it.filled = i;
    if (i == n) break;
    PyObject* item = seq_items(o, snap)[i];
    if (PFPY_LIKELY(pfpy_exact_from_py(item, &it.items[i], &it.views[i],
                                       PFPY_EXACT_SMALL_STR))) { /* no call, no refs */
      it.filled = i + 1;
      continue;
    }
    if (take_snapshot(o, n, &snap) != 0) {
      rc = -1;
      break;
    }
    if (it.first_other > i) it.first_other = i;
    item = seq_items(o, snap)[i]; /* the copy's reference keeps it alive */
    rc = value_from_py(ctx, item, &it.items[i], &it.views[i]);
    if (rc != 0) {
      add_segment(ctx, PyUnicode_FromFormat("[%zd]", i));
    } else {
      it.filled = i + 1;
      if (size_changed(o, n)) rc = changed_size(ctx, o);
    }
  }
  if (rc == 0) rc = create(kind, &it, 0, out);
  if (it.items != NULL) items_free(&it);
  Py_XDECREF(snap); /* after create: the views borrow its strs */
  leave(ctx);
  return rc;
}

/* Whether `key` is one of the kinds whose Python equality is exactly the native Map's (exact str,
 * exact int): keys of one dict that all are, are distinct natively too. A str subclass may
 * define its own equality, and 1 == 1.0 == True mixes are left to the hashing path. */
static inline int plain_key(PyObject* key) {
  return PyUnicode_CheckExact(key) || PyLong_CheckExact(key);
}

/* The common entry (str or int key, number or str value): converted by the rule's exact step,
 * which runs no Python code and takes no reference. */
static inline int plain_entry(PyObject* key, PyObject* value, PFAny* kv, PFByteArray* views) {
  return pfpy_exact_from_py(key, &kv[0], &views[0], PFPY_EXACT_SMALL_STR) &&
         pfpy_exact_from_py(value, &kv[1], &views[1], PFPY_EXACT_SMALL_STR);
}

static int dict_from_py(Ctx* ctx, PyObject* o, int32_t kind, PFAny* out) {
  if (enter(ctx, o) != 0) return -1;
  Py_ssize_t n = PyDict_GET_SIZE(o), cursor = 0;
  Items it;
  int rc = items_init(&it, 2 * n, ctx);
  PyObject *key, *value;
  PyObject* snap = NULL; /* the dict's items (new refs), taken as for lists (take_snapshot) */
  int distinct = 1;
  for (Py_ssize_t i = 0; rc == 0 && i < n; ++i) {
    if (snap == NULL) { /* no Python code ran yet: the dict is as it was */
      if (!PyDict_Next(o, &cursor, &key, &value)) break;
      distinct &= plain_key(key);
      /* The common entry (str or int key, number or str value) runs no Python code: no refs. */
      if (PFPY_LIKELY(plain_entry(key, value, &it.items[2 * i], &it.views[2 * i]))) {
        it.filled = 2 * i + 2;
        continue;
      }
      snap = PyDict_Items(o);
      if (snap == NULL) {
        rc = -1;
        break;
      }
    } else {
      distinct &= plain_key(PyTuple_GET_ITEM(PyList_GET_ITEM(snap, i), 0));
    }
    key = PyTuple_GET_ITEM(PyList_GET_ITEM(snap, i), 0); /* the copy keeps both alive */
    value = PyTuple_GET_ITEM(PyList_GET_ITEM(snap, i), 1);
    if (ctx->python_keys && PyTuple_Check(key)) { /* refused before its Array is built */
      pfpy_map_key_refused(key, NULL, NULL);
      ctx->own_error = 1; /* the path names the key */
      rc = -1;
    } else {
      rc = value_from_py(ctx, key, &it.items[2 * i], &it.views[2 * i]);
    }
    if (rc == 0) {
      it.filled = 2 * i + 1;
      if (ctx->python_keys && !pfpy_map_key_is_itself(key) &&
          pfpy_map_key_refused(key, &it.items[2 * i], NULL)) {
        ctx->own_error = 1;
        rc = -1;
      } else {
        rc = value_from_py(ctx, value, &it.items[2 * i + 1], &it.views[2 * i + 1]);
        if (rc == 0) it.filled = 2 * i + 2;
      }
    }
    if (rc != 0) {
      add_key_segment(ctx, key);
    } else if (size_changed(o, n)) {
      rc = changed_size(ctx, o);
    }
  }
  if (rc == 0 && it.filled != it.n) rc = changed_size(ctx, o); /* defensive: never unfilled */
  if (rc == 0) rc = create(kind, &it, distinct, out);
  if (it.items != NULL) items_free(&it);
  Py_XDECREF(snap); /* after create: the views borrow its strs */
  leave(ctx);
  return rc;
}

/* packedfun._rules.map_keys.refusal, imported on first use. */
static PyObject* map_key_refusal = NULL;

static PFPY_NOINLINE int import_map_key_rule(void) {
  PyObject* mod = PyImport_ImportModule("packedfun._rules.map_keys");
  if (mod == NULL) return -1;
  map_key_refusal = PyObject_GetAttrString(mod, "refusal");
  Py_DECREF(mod);
  return map_key_refusal == NULL ? -1 : 0;
}

/* The rule lives once, in Python, for both backends; it is reached only for keys of the uncommon
 * kinds (pfpy_map_key_is_itself lets the common ones through), so the call costs the hot paths
 * nothing. An inline value is read back for the rule's equality test; an object is not. */
int pfpy_map_key_refused(PyObject* key, const PFAny* converted, PyObject* what) {
  if (map_key_refusal == NULL && import_map_key_rule() != 0) return 1;
  int32_t kind = converted != NULL ? converted->type_index : kPFTypeArray;
  PyObject* back = Py_None;
  if (converted != NULL && kind < kPFTypeStaticObjectBegin) {
    back = pfpy_any_view_to_py(converted);
    if (back == NULL) return 1;
  } else {
    Py_INCREF(back);
  }
  PyObject* index = PyLong_FromLong(kind);
  PyObject* error = NULL;
  if (index != NULL) {
    PyObject* args[] = {key, index, back, what != NULL ? what : Py_None};
    error = PyObject_Vectorcall(map_key_refusal, args, 4, NULL);
  }
  Py_XDECREF(index);
  Py_DECREF(back);
  if (error == NULL) return 1;
  if (error == Py_None) {
    Py_DECREF(error);
    return 0;
  }
  PyErr_SetObject((PyObject*)Py_TYPE(error), error);
  Py_DECREF(error);
  return 1;
}

/* Converts one element into `*out` by the rule (core.h): an owned value, or a StrView/BytesView
 * over `view` that borrows `o`'s buffer (the caller keeps `o` alive until the container is
 * created). Nested containers are converted here, so that an error names its whole path. */
static int value_from_py(Ctx* ctx, PyObject* o, PFAny* out, PFByteArray* view) {
  if (pfpy_exact_from_py(o, out, view, PFPY_EXACT_SMALL_STR)) return 0;
  if (pfpy_kind_of(Py_TYPE(o)) == PFPY_KIND_CONTAINER) {
    return PyDict_Check(o) ? dict_from_py(ctx, o, kPFTypeMap, out)
                           : seq_from_py(ctx, o, kPFTypeArray, out);
  }
  int rc = pfpy_value_from_py(o, out, view, PFPY_POS_ELEMENT, 1);
  if (rc == PFPY_BARE_ERROR) ctx->own_error = 1; /* its message gets the path in front */
  /* An argument's array: its framework decides the call's allocator and results, unless a
   * top-level argument does. */
  if (rc == 0 && ctx->pos >= 0 && pfpy_tensor_known_type(Py_TYPE(o))) {
    pfpy_tensor_nested_note(Py_TYPE(o));
  }
  return rc == 0 ? 0 : -1;
}

/* Where the element at `path` is, worded by packedfun._rules.messages: "f: argument 0[1]",
 * "packedfun.Function argument 0[1]", "value[1]", "return value[1]". New str, or NULL. */
static PyObject* element_where(const Ctx* ctx, PyObject* path) {
  if (ctx->pos < 0) {
    return pfpy_message(ctx->fname != NULL ? "RETURN_VALUE_WHERE" : "VALUE_WHERE", "(O)", path);
  }
  PyObject* at = PyUnicode_FromFormat("%zd%U", ctx->pos, path);
  if (at == NULL) return NULL;
  PyObject* where = ctx->fname != NULL ? pfpy_message("ARG_WHERE", "(OO)", ctx->fname, at)
                                       : pfpy_message("ARG_WHERE_UNNAMED", "(O)", at);
  Py_DECREF(at);
  return where;
}

/* Rewrites the pending exception to name the function, the argument and the element's path. */
static PFPY_NOINLINE void decorate_error(Ctx* ctx) {
  PyObject* exc = pfpy_fetch_exception(); /* first: the path's join must not clear it */
  PyObject* path = NULL;
  if (ctx->path != NULL) {
    PyList_Reverse(ctx->path);
    PyObject* empty = PyUnicode_FromString("");
    path = empty ? PyUnicode_Join(empty, ctx->path) : NULL;
    Py_XDECREF(empty);
  }
  if (path == NULL) {
    PyErr_Clear();
    path = PyUnicode_FromString("");
  }
  if (exc == NULL || path == NULL) {
    Py_XDECREF(path);
    if (exc != NULL) pfpy_restore_exception(exc);
    return;
  }
  PyObject* name = ctx->fname ? ctx->fname : NULL;
  PyObject* where = element_where(ctx, path); /* "f: argument 0[1]", "value[1]" */
  if (where != NULL && ctx->own_error) {
    PyObject* what = PyObject_Str(exc);
    if (what != NULL) {
      pfpy_raise_message((PyObject*)Py_TYPE(exc), "AT_WHERE", "(OO)", where, what);
      Py_DECREF(what);
      Py_DECREF(where);
      Py_DECREF(exc);
      Py_DECREF(path);
      return;
    }
  }
  PyErr_Clear();
  if (ctx->pos >= 0) { /* a str element's encode error: its reason names the element */
    int done = pfpy_prefix_unicode_reason(exc, where);
    if (done) {
      Py_XDECREF(where);
      Py_DECREF(path);
      pfpy_restore_exception(exc);
      return;
    }
  }
  Py_XDECREF(where);
#if PY_VERSION_HEX >= 0x030B0000
  if (!PyErr_GivenExceptionMatches(exc, PyExc_RecursionError)) {
    PyObject* note = NULL;
    if (ctx->pos < 0) {
      note = pfpy_message("NOTE_VALUE", "(O)", path);
    } else {
      PyObject* at = PyUnicode_FromFormat("%zd%U", ctx->pos, path);
      note = at != NULL ? pfpy_message("NOTE_ARGUMENT", "(OO)", at, name ? name : Py_None) : NULL;
      Py_XDECREF(at);
    }
    PyObject* r = note ? PyObject_CallMethod(exc, "add_note", "O", note) : NULL;
    Py_XDECREF(r);
    Py_XDECREF(note);
    PyErr_Clear();
  }
#endif
  Py_DECREF(path);
  pfpy_restore_exception(exc);
}

int pfpy_container_from_py(PyObject* o, int32_t kind, PFAny* out, PyObject* fname, Py_ssize_t pos,
                           int python_keys) {
  /* The top-level container's items live on this stack (up to kSpareItems: most arguments) rather
   * than in a malloc'ed buffer too large for the allocator's fast path. */
  enum { kSpareItems = 256 };
  PFAny spare[2 * kSpareItems]; /* items, then as many views (a PFByteArray is a PFAny's size) */
  Ctx ctx;
  ctx.fname = fname;
  ctx.pos = pos;
  ctx.open = ctx.shallow;
  ctx.depth = 0;
  ctx.cap = (int)(sizeof(ctx.shallow) / sizeof(ctx.shallow[0]));
  ctx.path = NULL;
  ctx.own_error = 0;
  ctx.spare = spare;
  ctx.spare_n = kSpareItems;
  ctx.python_keys = python_keys;
  int rc = PyDict_Check(o) ? dict_from_py(&ctx, o, kind, out) : seq_from_py(&ctx, o, kind, out);
  if (rc != 0) decorate_error(&ctx);
  if (ctx.open != ctx.shallow) PyMem_Free(ctx.open);
  Py_XDECREF(ctx.path);
  return rc;
}

int pfpy_container_arg(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname) {
  if (pfpy_view_arg_wanted(pack, pos)) return pfpy_container_view_arg(o, pack, pos, fname);
  PFAny* slot = &pack->args[pos < 0 ? 0 : pos];
  PFAny made;
  int32_t kind = PyDict_Check(o) ? kPFTypeMap : kPFTypeArray;
  if (pfpy_container_from_py(o, kind, &made, fname, pos, 0) != 0) return -1;
  pack->temps[pack->num_temps++] = made.v_obj;
  *slot = made;
  return 0;
}
