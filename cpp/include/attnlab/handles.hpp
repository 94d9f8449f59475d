// Objects a caller holds by number (the bindings' translators, trainers and checkpoints, which
// JavaScript cannot hold as C++ objects). Ids are unique across every table of a process, so one
// dispose(id) can serve several tables, and an id once disposed is never handed out again.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "attnlab/error.hpp"

namespace attnlab {

inline int next_handle_id = 1;

template <class T>
class Handles {
 public:
  int add(std::unique_ptr<T> x) {
    items_[next_handle_id] = std::move(x);
    return next_handle_id++;
  }
  // `what` names the object in the Error for an id not (or no longer) held: "this translator".
  T& at(int id, const char* what) {
    auto it = items_.find(id);
    require(it != items_.end(), [&] { return std::string(what) + " has been disposed"; });
    return *it->second;
  }
  void dispose(int id) { items_.erase(id); }
  size_t size() const { return items_.size(); }

 private:
  std::map<int, std::unique_ptr<T>> items_;
};

}  // namespace attnlab
