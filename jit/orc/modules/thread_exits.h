// The thread-exit destructors of JIT modules' C++ thread_locals, kept by ffijit per thread and per
// module instead of by the C library, so that unloading a module can run or account for them.
//
// Module code registers them with __cxa_thread_atexit(function, object, &__dso_handle), which the
// module's link order resolves to an interposer (modules/module_state.cc). Left to glibc, they
// would belong to no library (a JIT module's __dso_handle is in no link map, so glibc charges them
// to the program) and run at thread exit even after the module's code was freed. Here each thread
// keeps its own list, run newest first when the thread exits, before the ORC runtime frees the
// thread's copies of the variables (a pthread key destructor, which runs after every thread-exit
// destructor); at process exit the main thread's run before the modules' static destructors.
#ifndef FFIJIT_JIT_ORC_MODULES_THREAD_EXITS_H_
#define FFIJIT_JIT_ORC_MODULES_THREAD_EXITS_H_

#include <cstddef>

namespace ffijit::orc {

// Records `function(object)` to run when the calling thread exits, on behalf of `owner` (a
// module).
void AddThreadExit(const void* owner, void (*function)(void*), void* object);

// How many thread-exit destructors of `owner` the calling thread has pending.
size_t ThreadExitCountOf(const void* owner);

// Runs now, newest first, the calling thread's pending thread-exit destructors of `owner` after
// its oldest `keep` (those of an object whose initialiser failed: keep = the count before).
void RunThreadExitsOf(const void* owner, size_t keep = 0);

// How many threads other than the calling one have thread-exit destructors of `owner` pending.
size_t OtherThreadsWithExitsOf(const void* owner);

}  // namespace ffijit::orc

#endif  // FFIJIT_JIT_ORC_MODULES_THREAD_EXITS_H_
