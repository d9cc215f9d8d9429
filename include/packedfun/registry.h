// Registering global functions at static-initialisation time: PACKEDFUN_REGISTER_GLOBAL("name"),
// GlobalDef() blocks, and PACKEDFUN_STATIC_INIT_BLOCK.
#ifndef PACKEDFUN_REGISTRY_H_
#define PACKEDFUN_REGISTRY_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/function_details.h>
#include <packedfun/function.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

namespace packedfun {
namespace detail {

/*!
 * Registers `f` as `name` without override. A name already taken by a Function wrapping the same
 * body (the same registration run twice) is quietly kept; any other clash is reported on stderr,
 * naming the function, and the first registration is kept: static initialisation cannot throw.
 * `ours` says that `f` was made by this header, so its trampoline identifies its record layout.
 * Returns whether `f` is now the registered function.
 */
inline bool RegisterGlobalAtInit(const char* name, const Function& f, bool ours,
                                 const char* doc) noexcept {
  PFByteArray n{name, std::strlen(name)};
  PFByteArray d{doc, doc ? std::strlen(doc) : 0};
  if (PFFunctionSetGlobal(&n, f.get(), 0, doc ? &d : nullptr) == 0) return true;
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  PFObject* existing = nullptr;
  bool same = false;
  if (ours) {
    if (PFFunctionGetGlobal(&n, &existing) != 0) DiscardRaised();
    if (existing != nullptr) same = SameFunctionBody(existing, f.get());
  }
  if (!same) {
    const PFErrorObject* e = reinterpret_cast<const PFErrorObject*>(err);
    std::fprintf(stderr,
                 "packedfun: cannot register global function '%s', keeping the first one: %.*s\n",
                 name, e ? static_cast<int>(e->message.size) : 0, e ? e->message.data : "");
  }
  PFObjectDecRef(existing);
  PFObjectDecRef(err);
  return false;
}

/*!
 * The object PACKEDFUN_REGISTER_GLOBAL builds: `.set_body_typed(f)`, `.set_body_packed(f)`,
 * `.set_body(Function)`, then optionally `.describe("doc")` and `.gil(policy)`. Trivially
 * destructible: it owns nothing (the registry holds the function), so nothing of it runs at process
 * exit.
 */
class GlobalRegistration {
 public:
  explicit GlobalRegistration(const char* name) noexcept : name_(name) {}

  template <typename F>
  GlobalRegistration& set_body_typed(F f) {
    return Register(Function::FromTyped(std::move(f), name_), true);
  }
  template <typename F>
  GlobalRegistration& set_body_packed(F f) {
    return Register(Function::FromPacked(std::move(f)), true);
  }
  GlobalRegistration& set_body(const Function& f) { return Register(f, false); }

  /*! As set_body_typed(f), naming the parameters and their defaults: `{"a", "b"_a = 2}`. A list
   *  that does not fit the signature is reported on stderr and the function registered without
   *  names (static initialisation cannot throw). */
  template <typename F>
  GlobalRegistration& set_body_typed(F f, const ArgList& args) {
    using Sig = FunctionSignature<std::decay_t<F>>;
    std::vector<std::string> types = Sig::TypeSchemas();
    Function fn = Function::FromTypedNamed(std::move(f), name_, MakeParamNames(name_, types, args));
    AttachMetadata(fn, types, args, Sig::IntRanges());
    return Register(fn, true);
  }
  /*! As set_body_packed(f), naming the (untyped) parameters and their defaults. */
  template <typename F>
  GlobalRegistration& set_body_packed(F f, const ArgList& args) {
    Function fn = Function::FromPacked(std::move(f));
    AttachMetadata(fn, {}, args);
    return Register(fn, true);
  }

  /*! Declares the GIL policy of the function this registration installed (none if it lost a
   *  name clash): `.gil(GILPolicy::kHold)` for a trivial function that never blocks nor calls
   *  back. */
  GlobalRegistration& gil(GILPolicy policy) noexcept {
    if (installed_ != nullptr && PFFunctionSetGILPolicy(installed_, static_cast<int32_t>(policy))) {
      DiscardRaised();
    }
    return *this;
  }

  /*! Attaches a docstring to the function this registration installed (none if it lost a
   *  name clash); applies to a later set_body* too. */
  GlobalRegistration& describe(const char* doc) noexcept {
    doc_ = doc;
    if (installed_ != nullptr) {
      PFByteArray n{name_, std::strlen(name_)}, d{doc, std::strlen(doc)};
      if (PFFunctionSetGlobal(&n, installed_, 1, &d) != 0) DiscardRaised();
    }
    return *this;
  }

 private:
  GlobalRegistration& Register(const Function& f, bool ours) noexcept {
    // Borrowed: once registered, the registry keeps the function alive.
    installed_ = RegisterGlobalAtInit(name_, f, ours, doc_) ? f.get() : nullptr;
    return *this;
  }

  void AttachMetadata(const Function& fn, const std::vector<std::string>& types,
                      const ArgList& args, const std::vector<const char*>& ranges = {}) noexcept {
    try {
      fn.SetMetadata(MetadataJson(name_, types, args, nullptr, ranges));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "packedfun: global function '%s': %s\n", name_, e.what());
    }
  }

  const char* name_;
  const char* doc_ = nullptr;
  PFObject* installed_ = nullptr;
};

/*! Runs a static-init body, reporting (never propagating) what it throws. */
inline int RunStaticInit(void (*body)(), const char* file, int line) noexcept {
  try {
    body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "packedfun: static initialization at %s:%d failed: %s\n", file, line,
                 e.what());
  }
  return 0;
}

}  // namespace detail

/*!
 * Registers several global functions in one place, each with its docstring and its parameters'
 * names and defaults (the metadata record), typically in a static-init block:
 *
 *   using namespace packedfun::literals;
 *   PACKEDFUN_STATIC_INIT_BLOCK() {
 *     packedfun::GlobalDef()
 *         .def("mylib.add", Add, "a + b", {"a", "b"_a = 1})
 *         .def("mylib.neg", Neg, "-x")
 *         .def("mylib.sub", Sub, {"a", "b"})
 *         .def_packed("mylib.echo", Echo, "returns its first argument");
 *   }
 *
 * Each def behaves as PACKEDFUN_REGISTER_GLOBAL: a clash with another function of the same name
 * or a list of names that does not fit the signature is reported on stderr (the function stays
 * registered, without names), never thrown, so one bad entry does not stop the others.
 * Docstrings are string literals.
 */
class GlobalDef {
 public:
  /*! A typed function (see Function::FromTyped). */
  template <typename F>
  GlobalDef& def(const char* name, F f) {
    last_ = Registration(name, nullptr).set_body_typed(std::move(f));
    return *this;
  }
  template <typename F, size_t N>
  GlobalDef& def(const char* name, F f, const char (&doc)[N]) {
    last_ = Registration(name, doc).set_body_typed(std::move(f));
    return *this;
  }
  template <typename F, size_t N>
  GlobalDef& def(const char* name, F f, const char (&doc)[N], const ArgList& args) {
    last_ = Registration(name, doc).set_body_typed(std::move(f), args);
    return *this;
  }
  template <typename F>
  GlobalDef& def(const char* name, F f, const ArgList& args) {
    last_ = Registration(name, nullptr).set_body_typed(std::move(f), args);
    return *this;
  }
  /*! A packed function `void(PackedArgs args, Any* rv)` (see Function::FromPacked). */
  template <typename F>
  GlobalDef& def_packed(const char* name, F f) {
    last_ = Registration(name, nullptr).set_body_packed(std::move(f));
    return *this;
  }
  template <typename F, size_t N>
  GlobalDef& def_packed(const char* name, F f, const char (&doc)[N]) {
    last_ = Registration(name, doc).set_body_packed(std::move(f));
    return *this;
  }
  template <typename F, size_t N>
  GlobalDef& def_packed(const char* name, F f, const char (&doc)[N], const ArgList& args) {
    last_ = Registration(name, doc).set_body_packed(std::move(f), args);
    return *this;
  }
  template <typename F>
  GlobalDef& def_packed(const char* name, F f, const ArgList& args) {
    last_ = Registration(name, nullptr).set_body_packed(std::move(f), args);
    return *this;
  }

  /*! Declares the GIL policy of the function defined last (see GlobalRegistration::gil):
   *  `.def("mylib.nop", Nop).gil(GILPolicy::kHold)`. */
  GlobalDef& gil(GILPolicy policy) noexcept {
    last_.gil(policy);
    return *this;
  }

 private:
  // One overload per form rather than an optional list, so that a def without names never
  // instantiates the metadata code. The docstring goes first: it is installed with the function.
  static detail::GlobalRegistration Registration(const char* name, const char* doc) noexcept {
    detail::GlobalRegistration r(name);
    if (doc != nullptr) r.describe(doc);
    return r;
  }

  detail::GlobalRegistration last_{""};  // what .gil() applies to
};

}  // namespace packedfun

#define PACKEDFUN_CONCAT_IMPL_(a, b) a##b
#define PACKEDFUN_CONCAT_(a, b) PACKEDFUN_CONCAT_IMPL_(a, b)

/*!
 * Registers a global function when the library is loaded:
 *   PACKEDFUN_REGISTER_GLOBAL("mylib.add").set_body_typed(Add);
 *   PACKEDFUN_REGISTER_GLOBAL("mylib.echo").set_body_packed([](PackedArgs a, Any* rv) { ... });
 *   PACKEDFUN_REGISTER_GLOBAL("mylib.sub").set_body_typed(Sub).describe("a - b");
 *   PACKEDFUN_REGISTER_GLOBAL("mylib.addk").set_body_typed(Add, {"a", "b"_a = 2});  // keywords
 *   PACKEDFUN_REGISTER_GLOBAL("mylib.nop").set_body_typed(Nop).gil(GILPolicy::kHold);  // trivial
 */
#define PACKEDFUN_REGISTER_GLOBAL(Name)                                              \
  [[maybe_unused]] static ::packedfun::detail::GlobalRegistration PACKEDFUN_CONCAT_( \
      pf_global_registration_, __COUNTER__) = ::packedfun::detail::GlobalRegistration(Name)

/*!
 * A block of code run when the library is loaded (static initialization), typically reflection
 * definitions. What it throws is reported on stderr, never propagated:
 *   PACKEDFUN_STATIC_INIT_BLOCK() { packedfun::reflection::ObjectDef<PointObj>().def_ro(...); }
 */
#define PACKEDFUN_STATIC_INIT_BLOCK()                                                        \
  static void PACKEDFUN_CONCAT_(pf_static_init_body_, __LINE__)();                           \
  [[maybe_unused]] static const int PACKEDFUN_CONCAT_(pf_static_init_, __LINE__) =           \
      ::packedfun::detail::RunStaticInit(&PACKEDFUN_CONCAT_(pf_static_init_body_, __LINE__), \
                                         __FILE__, __LINE__);                                \
  static void PACKEDFUN_CONCAT_(pf_static_init_body_, __LINE__)()

#endif  // PACKEDFUN_REGISTRY_H_
