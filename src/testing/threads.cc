// The "testing.*" functions of the thread tests and benchmarks: native threads, the GIL, signals.
#include <packedfun/packedfun.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <string>
#include <thread>
#include <vector>

namespace packedfun {
namespace testing {
namespace {

using Clock = std::chrono::steady_clock;

/*! Calls f(t * calls + i) `calls` times on each of `threads` new threads and joins them. Returns
 *  [sum of the int results, List of "Kind: message" of every call that raised]; with `rethrow`
 *  the first error caught is thrown again instead, so the caller sees its original exception. */
Array<Any> CallFromThreads(Function f, int64_t threads, int64_t calls, bool rethrow) {
  std::atomic<int64_t> sum{0};
  std::vector<std::vector<std::string>> messages(static_cast<size_t>(threads));
  std::vector<std::exception_ptr> first(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int64_t i = 0; i < calls; ++i) {
        try {
          sum += f(t * calls + i).cast<int64_t>();
        } catch (const Error& e) {
          messages[t].push_back(e.kind() + ": " + e.message());
          if (!first[t]) first[t] = std::current_exception();
        }
      }
    });
  }
  for (std::thread& th : pool) th.join();
  List<String> errors;
  for (size_t t = 0; t < messages.size(); ++t) {
    if (rethrow && first[t]) std::rethrow_exception(first[t]);
    for (const std::string& m : messages[t]) errors.push_back(String(m));
  }
  return Array<Any>({Any(sum.load()), Any(errors)});
}

/*! Keeps the CPU busy for `ms` milliseconds (native work that needs no lock). */
int64_t SpinMs(double ms) {
  auto end = Clock::now() + std::chrono::duration<double, std::milli>(ms);
  int64_t n = 0;
  while (Clock::now() < end) ++n;
  return n;
}

/*! Waits `ms` milliseconds without using the CPU (native I/O or a lock would wait the same). */
double SleepMs(double ms) {
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
  return ms;
}

/*! Loops for up to `seconds`, checking signals every millisecond (EnvCheckSignals throws what a
 *  handler raised). Returns the seconds it ran when no signal stopped it. */
double SpinCheckingSignals(double seconds) {
  auto start = Clock::now();
  auto end = start + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    SpinMs(1.0);
    EnvCheckSignals();
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/*! Declared GIL-holding, it releases the caller's lock itself for the scope in which a native
 *  thread calls `f` (which would deadlock on the join otherwise). */
Any CallOnThreadUnlocked(Function f) {
  Any result;
  std::exception_ptr error;
  {
    EnvReleaseCallerLock unlocked;
    std::thread([&] {
      try {
        result = f();
      } catch (...) {
        error = std::current_exception();
      }
    }).join();
  }
  if (error) std::rethrow_exception(error);
  return result;
}

/*! Moves `value` to a new native thread that drops the last reference as it exits (joined). */
void DropOnThread(Any value) {
  std::thread([v = std::move(value)]() mutable { Any gone = std::move(v); }).join();
}

/*! Starts a detached native thread calling f() every `period_us` microseconds until a call
 *  raises (at interpreter exit callbacks fail: the thread then ends). */
void StartCallerThread(Function f, int64_t period_us) {
  std::thread([f, period_us] {
    try {
      for (;;) {
        f();
        std::this_thread::sleep_for(std::chrono::microseconds(period_us));
      }
    } catch (const Error&) {
    }
  }).detach();
}

/*! Nanoseconds per call of f() over `calls` calls, made on a new native thread (no GIL held by
 *  anyone) or on the calling thread. */
double CallbackNs(Function f, int64_t calls, bool on_native_thread) {
  double ns = 0;
  auto run = [&] {
    auto start = Clock::now();
    for (int64_t i = 0; i < calls; ++i) f();
    ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count() / calls;
  };
  if (on_native_thread) {
    EnvReleaseCallerLock unlocked;
    std::thread(run).join();
  } else {
    run();
  }
  return ns;
}

}  // namespace

PACKEDFUN_REGISTER_GLOBAL("testing.nop_release")
    .set_body_packed([](PackedArgs, Any*) {})
    .describe("testing.nop under the default GIL policy (released for the call).");
PACKEDFUN_REGISTER_GLOBAL("testing.add_int_release")
    .set_body_typed([](int64_t a, int64_t b) { return a + b; })
    .describe("testing.add_int under the default GIL policy (released for the call).");
PACKEDFUN_REGISTER_GLOBAL("testing.call_from_threads")
    .set_body_typed(CallFromThreads)
    .describe("call_from_threads(f, threads, calls, rethrow): f(i) from native threads.");
PACKEDFUN_REGISTER_GLOBAL("testing.spin_ms")
    .set_body_typed(SpinMs)
    .describe("spin_ms(ms): busy native work for ms milliseconds.");
PACKEDFUN_REGISTER_GLOBAL("testing.sleep_ms")
    .set_body_typed(SleepMs)
    .describe("sleep_ms(ms): a native wait of ms milliseconds that uses no CPU.");
PACKEDFUN_REGISTER_GLOBAL("testing.spin_ms_hold")
    .set_body_typed(SpinMs)
    .gil(GILPolicy::kHold)
    .describe("spin_ms declared GIL-holding (what every function did before ABI 1.4).");
PACKEDFUN_REGISTER_GLOBAL("testing.spin_checking_signals")
    .set_body_typed(SpinCheckingSignals)
    .gil(GILPolicy::kHold)
    .describe("spin_checking_signals(seconds): a long loop that stops on Ctrl-C.");
PACKEDFUN_REGISTER_GLOBAL("testing.spin_checking_signals_release")
    .set_body_typed(SpinCheckingSignals)
    .describe("spin_checking_signals under the default GIL policy.");
PACKEDFUN_REGISTER_GLOBAL("testing.call_on_thread_unlocked")
    .set_body_typed(CallOnThreadUnlocked)
    .gil(GILPolicy::kHold)
    .describe(
        "Holds the GIL by policy, releases it with EnvReleaseCallerLock to call f on a thread.");
PACKEDFUN_REGISTER_GLOBAL("testing.drop_on_thread")
    .set_body_typed(DropOnThread)
    .describe("drop_on_thread(value): a native thread drops the last native reference.");
PACKEDFUN_REGISTER_GLOBAL("testing.start_caller_thread")
    .set_body_typed(StartCallerThread)
    .describe("start_caller_thread(f, period_us): a detached native thread calling f.");
PACKEDFUN_REGISTER_GLOBAL("testing.callback_ns")
    .set_body_typed(CallbackNs)
    .gil(GILPolicy::kHold)
    .describe("callback_ns(f, calls, on_native_thread): ns per call of f from C++.");

}  // namespace testing
}  // namespace packedfun
