// Per-thread lists of JIT modules' thread-exit destructors (thread_exits.h).
#include "orc/modules/thread_exits.h"

#include <cstddef>
#include <mutex>
#include <unordered_set>
#include <vector>

#include <cxxabi.h>

extern "C" void* __dso_handle;  // this library's

namespace ffijit::orc {
namespace {

struct Entry {
  const void* owner;
  void (*function)(void*);
  void* object;
};

class ThreadExits;

// Every thread's list, for unloads on other threads to inspect.
struct AllThreads {
  std::mutex mutex;  // guards `live` and every list's entries
  std::unordered_set<ThreadExits*> live;
};
AllThreads& All() {
  static auto* all = new AllThreads();  // threads may exit after the statics are destroyed
  return *all;
}

// Where the calling thread stands: its list not yet made, alive, or already destroyed (the
// thread is exiting and a later destructor registered one more).
enum class State : unsigned char { kNone, kLive, kGone };
thread_local State t_state = State::kNone;

class ThreadExits {
 public:
  ThreadExits() {
    AllThreads& all = All();
    std::lock_guard lock(all.mutex);
    all.live.insert(this);
    t_state = State::kLive;
  }
  // Runs the thread's destructors newest first; one may register another, which runs next. Each
  // stays listed until it has returned: an unload on another thread meanwhile is refused.
  ~ThreadExits() {
    AllThreads& all = All();
    for (;;) {
      Entry entry{};
      size_t index = 0;
      {
        std::lock_guard lock(all.mutex);
        if (entries_.empty()) {
          all.live.erase(this);
          break;
        }
        index = entries_.size() - 1;
        entry = entries_[index];
      }
      entry.function(entry.object);
      std::lock_guard lock(all.mutex);  // entries registered meanwhile came after `index`
      entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(index));
    }
    t_state = State::kGone;
  }
  ThreadExits(const ThreadExits&) = delete;
  ThreadExits& operator=(const ThreadExits&) = delete;

  void Add(const Entry& entry) {
    std::lock_guard lock(All().mutex);
    entries_.push_back(entry);
  }
  // Takes the entries of `owner` after its oldest `keep` out, oldest first.
  std::vector<Entry> Take(const void* owner, size_t keep) {
    std::lock_guard lock(All().mutex);
    std::vector<Entry> taken, kept;
    size_t seen = 0;
    for (const Entry& entry : entries_) {
      (entry.owner == owner && seen++ >= keep ? taken : kept).push_back(entry);
    }
    entries_ = std::move(kept);
    return taken;
  }
  size_t Count(const void* owner) {
    std::lock_guard lock(All().mutex);
    size_t count = 0;
    for (const Entry& entry : entries_) count += entry.owner == owner ? 1 : 0;
    return count;
  }
  // Called with All().mutex held.
  bool Holds(const void* owner) const {
    for (const Entry& entry : entries_) {
      if (entry.owner == owner) return true;
    }
    return false;
  }

 private:
  std::vector<Entry> entries_;
};

ThreadExits& Mine() {
  thread_local ThreadExits exits;
  return exits;
}

}  // namespace

void AddThreadExit(const void* owner, void (*function)(void*), void* object) {
  if (t_state == State::kGone) {
    // The thread's list has run: the C library runs this one in the same pass of its own.
    __cxxabiv1::__cxa_thread_atexit(function, object, &__dso_handle);
    return;
  }
  Mine().Add(Entry{owner, function, object});
}

size_t ThreadExitCountOf(const void* owner) {
  return t_state == State::kLive ? Mine().Count(owner) : 0;
}

void RunThreadExitsOf(const void* owner, size_t keep) {
  if (t_state != State::kLive) return;
  // A destructor may register another of the same module: run until none is left.
  for (std::vector<Entry> taken = Mine().Take(owner, keep); !taken.empty();
       taken = Mine().Take(owner, keep)) {
    for (auto it = taken.rbegin(); it != taken.rend(); ++it) it->function(it->object);
  }
}

size_t OtherThreadsWithExitsOf(const void* owner) {
  ThreadExits* mine = t_state == State::kLive ? &Mine() : nullptr;
  AllThreads& all = All();
  std::lock_guard lock(all.mutex);
  size_t count = 0;
  for (const ThreadExits* exits : all.live) {
    if (exits != mine && exits->Holds(owner)) ++count;
  }
  return count;
}

}  // namespace ffijit::orc
