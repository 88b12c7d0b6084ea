// baton_emu_rewrite: turns one CUDA source (.cu/.cuh) into C++ for the emulated GPU, keeping every
// line where it was (a `#line` names the original file, so diagnostics point at the source):
//   kernel<<<grid, block, shared, stream>>>(args)  ->  ::baton_emu::launch("kernel", __FILE__, __LINE__,
//       ::baton_emu::LaunchConfig(grid, block, shared, stream), <a lambda calling kernel>, args)
//   __shared__ T name[N];          ->  static thread_local T name[N]; ::baton_emu::shared_static(...);
//   extern __shared__ T name[];    ->  T* const name = static_cast<T*>(::baton_emu::shared_dynamic("name"));
//   #pragma unroll [n]             ->  (an empty line: g++ does not know nvcc's pragma)
// Comments, string and character literals are left alone. Usage: baton_emu_rewrite <in> <out>.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace {

struct RewriteError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

int line_of(const std::string& s, size_t pos) {
  int line = 1;
  for (size_t i = 0; i < pos && i < s.size(); ++i) line += s[i] == '\n';
  return line;
}

// Skips a comment or literal starting at i; returns the position after it (i when there is none).
size_t skip_comment_or_literal(const std::string& s, size_t i) {
  if (s.compare(i, 2, "//") == 0) {
    const size_t end = s.find('\n', i);
    return end == std::string::npos ? s.size() : end;
  }
  if (s.compare(i, 2, "/*") == 0) {
    const size_t end = s.find("*/", i + 2);
    if (end == std::string::npos) throw RewriteError("unterminated comment at line " + std::to_string(line_of(s, i)));
    return end + 2;
  }
  if (s[i] == '"' || s[i] == '\'') {
    // A quote inside a number (1'000) is a digit separator, not a literal.
    if (s[i] == '\'' && i > 0 && std::isalnum(static_cast<unsigned char>(s[i - 1]))) return i + 1;
    const char quote = s[i];
    size_t j = i + 1;
    while (j < s.size() && s[j] != quote) j += s[j] == '\\' ? 2 : 1;
    if (j >= s.size()) throw RewriteError("unterminated literal at line " + std::to_string(line_of(s, i)));
    return j + 1;
  }
  return i;
}

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Position of the bracket closing the one at `open` (comments and literals skipped).
size_t matching(const std::string& s, size_t open, char open_c, char close_c) {
  int depth = 0;
  for (size_t i = open; i < s.size();) {
    const size_t skipped = skip_comment_or_literal(s, i);
    if (skipped != i) {
      i = skipped;
      continue;
    }
    if (s[i] == open_c) ++depth;
    if (s[i] == close_c && --depth == 0) return i;
    ++i;
  }
  throw RewriteError(std::string("unbalanced '") + open_c + "' from line " + std::to_string(line_of(s, open)));
}

std::string collapse_spaces(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// The replacement followed by the newlines of the text it replaces, so later lines keep their numbers.
std::string keep_lines(const std::string& replacement, const std::string& replaced) {
  const auto count = [](const std::string& t) { return static_cast<int>(std::count(t.begin(), t.end(), '\n')); };
  return replacement + std::string(static_cast<size_t>(std::max(0, count(replaced) - count(replacement))), '\n');
}

// The callee of a launch whose `<<<` is at k: a (qualified) name with an optional template argument list.
size_t callee_start(const std::string& s, size_t k) {
  size_t j = k;
  while (j > 0 && std::isspace(static_cast<unsigned char>(s[j - 1]))) --j;
  if (j > 0 && s[j - 1] == '>') {
    int depth = 0;
    do {
      --j;
      if (s[j] == '>') ++depth;
      if (s[j] == '<') --depth;
    } while (depth > 0 && j > 0);
    while (j > 0 && std::isspace(static_cast<unsigned char>(s[j - 1]))) --j;
  }
  while (j > 0 && (is_identifier_char(s[j - 1]) || s[j - 1] == ':')) --j;
  if (j == k) throw RewriteError("a launch without a kernel name at line " + std::to_string(line_of(s, k)));
  return j;
}

// Rewrites the launch at `k` (the `<<<`) whose callee starts at `start` in `out`; returns the position after it.
size_t rewrite_launch(const std::string& s, size_t start, size_t k, std::string& out) {
  const std::string callee = collapse_spaces(s.substr(start, k - start));
  size_t end_config = k + 3;
  int depth = 0;
  while (end_config < s.size() && !(depth == 0 && s.compare(end_config, 3, ">>>") == 0)) {
    const size_t skipped = skip_comment_or_literal(s, end_config);
    if (skipped != end_config) {
      end_config = skipped;
      continue;
    }
    const char c = s[end_config];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    ++end_config;
  }
  if (end_config >= s.size()) throw RewriteError("no '>>>' after the '<<<' at line " + std::to_string(line_of(s, k)));
  const std::string config = s.substr(k + 3, end_config - k - 3);
  size_t open = end_config + 3;
  while (open < s.size() && std::isspace(static_cast<unsigned char>(s[open]))) ++open;
  if (open >= s.size() || s[open] != '(') {
    throw RewriteError("expected the kernel's argument list after '>>>' at line " + std::to_string(line_of(s, k)));
  }
  const size_t close = matching(s, open, '(', ')');
  const std::string args = s.substr(open + 1, close - open - 1);
  const bool has_args = args.find_first_not_of(" \t\r\n") != std::string::npos;
  const std::string replacement =
      "::baton_emu::launch(\"" + escape(callee) + "\", __FILE__, __LINE__, ::baton_emu::LaunchConfig(" + config +
      "), [&](auto&&... baton_emu_a) { " + callee + "(static_cast<decltype(baton_emu_a)&&>(baton_emu_a)...); }" +
      (has_args ? ", " + args : std::string()) + ")";
  out += keep_lines(replacement, s.substr(start, close + 1 - start));
  return close + 1;
}

// Removes __align__(n) and alignas(n) from a declaration's type, returning them separately.
std::string take_alignment(std::string& type) {
  std::string alignment;
  for (const char* word : {"__align__", "alignas"}) {
    const size_t at = type.find(word);
    if (at == std::string::npos) continue;
    const size_t open = type.find('(', at);
    const size_t close = matching(type, open, '(', ')');
    alignment += "alignas(" + type.substr(open + 1, close - open - 1) + ") ";
    type.erase(at, close + 1 - at);
  }
  return alignment;
}

// Rewrites the __shared__ declaration whose keyword is at `at` (`extern` before it when `is_extern`, from
// `start`); returns the position after its ';'.
size_t rewrite_shared(const std::string& s, size_t start, size_t at, bool is_extern, std::string& out) {
  const size_t semicolon = s.find(';', at);
  if (semicolon == std::string::npos)
    throw RewriteError("no ';' after __shared__ at line " + std::to_string(line_of(s, at)));
  const std::string declaration = s.substr(at + 10, semicolon - at - 10);
  if (declaration.find(',') != std::string::npos && declaration.find('[') > declaration.find(',')) {
    throw RewriteError("one variable per __shared__ declaration, please (line " + std::to_string(line_of(s, at)) + ")");
  }
  const size_t bracket = std::min(declaration.find('['), declaration.size());
  size_t name_end = bracket;
  while (name_end > 0 && std::isspace(static_cast<unsigned char>(declaration[name_end - 1]))) --name_end;
  size_t name_begin = name_end;
  while (name_begin > 0 && is_identifier_char(declaration[name_begin - 1])) --name_begin;
  const std::string name = declaration.substr(name_begin, name_end - name_begin);
  std::string type = declaration.substr(0, name_begin);
  if (name.empty())
    throw RewriteError("cannot find the name of the __shared__ variable at line " + std::to_string(line_of(s, at)));
  std::string replacement;
  if (is_extern) {
    take_alignment(type);
    replacement = collapse_spaces(type) + "* const " + name + " = static_cast<" + collapse_spaces(type) +
                  "*>(::baton_emu::shared_dynamic(\"" + name + "\"));";
  } else {
    const std::string alignment = take_alignment(type);
    replacement = "static thread_local " + alignment + collapse_spaces(type) + " " + name +
                  declaration.substr(name_end) + "; ::baton_emu::shared_static(&" + name + ", sizeof(" + name +
                  "), \"" + name + "\");";
  }
  out += keep_lines(replacement, s.substr(start, semicolon + 1 - start));
  return semicolon + 1;
}

// True when the line starting at `i` is `#pragma unroll [n]` (nvcc's; g++ would warn about it).
bool is_pragma_unroll(const std::string& s, size_t i) {
  if (i > 0 && s[i - 1] != '\n') return false;
  size_t j = s.find_first_not_of(" \t", i);
  if (j == std::string::npos || s[j] != '#') return false;
  j = s.find_first_not_of(" \t", j + 1);
  if (j == std::string::npos || s.compare(j, 6, "pragma") != 0) return false;
  j = s.find_first_not_of(" \t", j + 6);
  return j != std::string::npos && s.compare(j, 6, "unroll") == 0 && !is_identifier_char(s[j + 6]);
}

std::string rewrite(const std::string& s) {
  std::string out;
  size_t copied = 0;
  for (size_t i = 0; i < s.size();) {
    if (is_pragma_unroll(s, i)) {  // an unrolling hint only: dropped, the line kept empty
      out += s.substr(copied, i - copied);
      copied = i = std::min(s.find('\n', i), s.size());
      continue;
    }
    const size_t skipped = skip_comment_or_literal(s, i);
    if (skipped != i) {
      i = skipped;
      continue;
    }
    if (s.compare(i, 3, "<<<") == 0) {
      const size_t start = callee_start(s, i);
      out += s.substr(copied, start - copied);
      copied = i = rewrite_launch(s, start, i, out);
      continue;
    }
    if (s.compare(i, 10, "__shared__") == 0 && (i == 0 || !is_identifier_char(s[i - 1])) &&
        !is_identifier_char(s[i + 10])) {
      size_t start = i;
      while (start > 0 && std::isspace(static_cast<unsigned char>(s[start - 1]))) --start;
      const bool is_extern = start >= 6 && s.compare(start - 6, 6, "extern") == 0;
      start = is_extern ? start - 6 : i;
      out += s.substr(copied, start - copied);
      copied = i = rewrite_shared(s, start, i, is_extern, out);
      continue;
    }
    ++i;
  }
  out += s.substr(copied);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: baton_emu_rewrite <input .cu/.cuh> <output>\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "baton_emu_rewrite: cannot read " << argv[1] << "\n";
    return 1;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  try {
    const std::string text = "#line 1 \"" + escape(argv[1]) + "\"\n" + rewrite(buffer.str());
    // Written beside the output and renamed over it: a generator that runs the same rewrite for two
    // targets at once (Unix Makefiles) never lets a compiler read a half-written file.
    const std::string partial = std::string(argv[2]) + ".partial." + std::to_string(getpid());
    std::ofstream out(partial, std::ios::binary);
    out << text;
    out.close();
    if (!out || std::rename(partial.c_str(), argv[2]) != 0) {
      std::remove(partial.c_str());
      std::cerr << "baton_emu_rewrite: cannot write " << argv[2] << "\n";
      return 1;
    }
  } catch (const RewriteError& e) {
    std::cerr << argv[1] << ": baton_emu_rewrite: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
