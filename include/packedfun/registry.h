// Registering global functions at static-initialisation time: PACKEDFUN_REGISTER_GLOBAL("name").
#ifndef PACKEDFUN_REGISTRY_H_
#define PACKEDFUN_REGISTRY_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/function_details.h>
#include <packedfun/function.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

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
  if (ours && PFFunctionGetGlobal(&n, &existing) == 0 && existing != nullptr) {
    same = SameFunctionBody(existing, f.get());
  }
  if (!same) {
    const PFErrorObject* e = reinterpret_cast<const PFErrorObject*>(err);
    std::fprintf(stderr, "packedfun: cannot register global function '%s', keeping the first one: %.*s\n",
                 name, e ? static_cast<int>(e->message.size) : 0, e ? e->message.data : "");
  }
  PFObjectDecRef(existing);
  PFObjectDecRef(err);
  return false;
}

/*!
 * The object PACKEDFUN_REGISTER_GLOBAL builds: `.set_body_typed(f)`, `.set_body_packed(f)`,
 * `.set_body(Function)`, then optionally `.describe("doc")`. It lives for the whole process
 * (never destroyed, so nothing runs at exit after the runtime is gone).
 */
class GlobalRegistration {
 public:
  static GlobalRegistration& Make(const char* name) { return *new GlobalRegistration(name); }

  template <typename F>
  GlobalRegistration& set_body_typed(F f) {
    return Register(Function::FromTyped(std::move(f), name_), true);
  }
  template <typename F>
  GlobalRegistration& set_body_packed(F f) {
    return Register(Function::FromPacked(std::move(f)), true);
  }
  GlobalRegistration& set_body(Function f) { return Register(std::move(f), false); }

  /*! Attaches a docstring (re-registers the function this registration installed). */
  GlobalRegistration& describe(const char* doc) {
    doc_ = doc;
    if (registered_) {
      PFByteArray n{name_, std::strlen(name_)}, d{doc, std::strlen(doc)};
      if (PFFunctionSetGlobal(&n, func_.get(), 1, &d) != 0) {
        PFObject* err = nullptr;
        PFErrorMoveFromRaised(&err);
        PFObjectDecRef(err);
      }
    }
    return *this;
  }

 private:
  explicit GlobalRegistration(const char* name) : name_(name) {}
  GlobalRegistration& Register(Function f, bool ours) {
    func_ = std::move(f);
    registered_ = RegisterGlobalAtInit(name_, func_, ours, doc_);
    return *this;
  }

  const char* name_;
  const char* doc_ = nullptr;
  Function func_;
  bool registered_ = false;
};

}  // namespace detail
}  // namespace packedfun

#define PACKEDFUN_CONCAT_IMPL_(a, b) a##b
#define PACKEDFUN_CONCAT_(a, b) PACKEDFUN_CONCAT_IMPL_(a, b)

/*!
 * Registers a global function when the library is loaded:
 *   PACKEDFUN_REGISTER_GLOBAL("mylib.add").set_body_typed(Add);
 *   PACKEDFUN_REGISTER_GLOBAL("mylib.echo").set_body_packed([](PackedArgs a, Any* rv) { ... });
 *   PACKEDFUN_REGISTER_GLOBAL("mylib.sub").set_body_typed(Sub).describe("a - b");
 */
#define PACKEDFUN_REGISTER_GLOBAL(Name)                                                    \
  [[maybe_unused]] static ::packedfun::detail::GlobalRegistration& PACKEDFUN_CONCAT_(      \
      pf_global_registration_, __COUNTER__) = ::packedfun::detail::GlobalRegistration::Make(Name)

#endif  // PACKEDFUN_REGISTRY_H_
