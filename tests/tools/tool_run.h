// Runs the `ffijit` tool as a subprocess through the shell, with stdout and stderr kept apart.
#ifndef FFIJIT_TESTS_TOOLS_TOOL_RUN_H_
#define FFIJIT_TESTS_TOOLS_TOOL_RUN_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace ffijit::testing {

struct ToolResult {
  int status = -1;  // the exit code, or -1 when the tool did not exit normally (a crash)
  std::string out;  // stdout
  std::string err;  // stderr
};

inline std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs `ffijit <args>` (args already shell-quoted as needed) with an empty stdin.
inline ToolResult RunTool(const std::string& args) {
  char err_path[] = "/tmp/ffijit_tool_test_XXXXXX";
  const int fd = mkstemp(err_path);
  ToolResult result;
  if (fd < 0) return result;
  close(fd);
  // FFIJIT_TOOL_RUNNER: the emulator command of a cross build, else "".
  const std::string cmd = std::string(FFIJIT_TOOL_RUNNER) + " " + Quote(FFIJIT_TOOL_PATH) + " " +
                          args + " </dev/null 2>" + Quote(err_path);
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe != nullptr) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) result.out.append(buf, n);
    const int status = pclose(pipe);
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::ifstream err_file(err_path);
  std::stringstream err;
  err << err_file.rdbuf();
  result.err = err.str();
  std::remove(err_path);
  return result;
}

// A file holding `text` for the test's lifetime (for @FILE arguments).
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    char path[] = "/tmp/ffijit_tool_input_XXXXXX";
    const int fd = mkstemp(path);
    if (fd >= 0) {
      close(fd);
      path_ = path;
      std::ofstream(path_) << text;
    }
  }
  ~TempFile() {
    if (!path_.empty()) std::remove(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace ffijit::testing

#endif  // FFIJIT_TESTS_TOOLS_TOOL_RUN_H_
