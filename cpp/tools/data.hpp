// Shared by the native tools: reading the pairs TSV, the fixed validation split, the PyTorch
// tutorial's filter, file I/O and flag parsing.
#pragma once
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnlab/nn/tokenizer.hpp"

namespace attnlab::tools {

struct Pair {
  std::string src, tgt;  // in the model's direction
};

// pairs.tsv holds English<TAB>French. direction "fra-eng": source = French; "eng-fra": English.
inline std::vector<Pair> read_pairs(const std::string& path, const std::string& direction) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot open " + path);
  if (direction != "fra-eng" && direction != "eng-fra") throw std::runtime_error("direction must be fra-eng or eng-fra");
  std::vector<Pair> out;
  std::string line;
  while (std::getline(f, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto tab = line.find('\t');
    if (tab == std::string::npos) continue;
    std::string en = line.substr(0, tab), fr = line.substr(tab + 1);
    const auto tab2 = fr.find('\t');
    if (tab2 != std::string::npos) fr = fr.substr(0, tab2);
    if (direction == "fra-eng") out.push_back({fr, en});
    else out.push_back({en, fr});
  }
  return out;
}

// The validation split: a pair is held out when FNV-1a(normalised source sentence) % 1000 is
// below per_mille. All pairs sharing a source land on the same side, so validation sources
// are never seen in training and keep all their references.
inline uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}
inline bool is_validation(const std::string& src, int per_mille) {
  return static_cast<int>(fnv1a(nn::utf8_encode(nn::normalize(src))) % 1000) < per_mille;
}

// The PyTorch seq2seq tutorial's filter (French -> English): both sides under 10 words after its
// normalisation, and the English side starting with one of eng_prefixes.
inline std::string tutorial_normalize(const std::string& s) {
  std::string out;
  for (const auto& t : nn::bleu_tokens(s)) {
    if (t == ".") continue;  // the tutorial's regex keeps only letters and ! ?
    if (!out.empty()) out += ' ';
    out += t;
  }
  return out;
}
inline bool tutorial_filter(const std::string& en, const std::string& fr) {
  static const char* prefixes[] = {"i am ", "i m ", "he is", "he s ", "she is", "she s ", "you are", "you re ", "we are", "we re ", "they are", "they re "};
  const std::string e = tutorial_normalize(en), f = tutorial_normalize(fr);
  auto words = [](const std::string& s) {
    int n = 1;
    for (char c : s) n += c == ' ';
    return n;
  };
  if (words(e) >= 10 || words(f) >= 10) return false;
  for (const char* p : prefixes)
    if (e.compare(0, std::string(p).size(), p) == 0) return true;
  return false;
}

inline std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
inline void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) throw std::runtime_error("cannot write " + tmp);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!f) throw std::runtime_error("write failed: " + tmp);
  }
  std::rename(tmp.c_str(), path.c_str());
}

// --key value / --key=value / --flag flags, plus --config FILE with key=value lines.
struct Flags {
  std::map<std::string, std::string> kv;
  void parse(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a.rfind("--", 0) != 0) throw std::runtime_error("unexpected argument " + a);
      a = a.substr(2);
      std::string v = "1";
      const auto eq = a.find('=');
      if (eq != std::string::npos) {
        v = a.substr(eq + 1);
        a = a.substr(0, eq);
      } else if (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) {
        v = argv[++i];
      }
      if (a == "config") {
        std::ifstream f(v);
        if (!f) throw std::runtime_error("cannot open config " + v);
        std::string line;
        while (std::getline(f, line)) {
          if (line.empty() || line[0] == '#') continue;
          const auto e = line.find('=');
          if (e == std::string::npos) continue;
          if (!kv.count(line.substr(0, e))) kv[line.substr(0, e)] = line.substr(e + 1);
        }
      } else {
        kv[a] = v;
      }
    }
  }
  // Rejects a flag (or config key) the tool does not know: a typo must not train for an hour
  // with a default. `--help` prints `usage` instead of running.
  bool usage_or_check(const std::string& usage, std::initializer_list<const char*> known) const {
    if (has("help")) {
      std::fputs(usage.c_str(), stdout);
      return true;
    }
    for (const auto& [k, v] : kv) {
      bool ok = false;
      for (const char* n : known) ok = ok || k == n;
      if (!ok) throw std::runtime_error("unknown flag --" + k + " (--help lists the flags)");
    }
    return false;
  }
  bool has(const std::string& k) const { return kv.count(k) > 0; }
  std::string s(const std::string& k, const std::string& d) const { return has(k) ? kv.at(k) : d; }
  long long i(const std::string& k, long long d) const { return has(k) ? std::stoll(kv.at(k)) : d; }
  double f(const std::string& k, double d) const { return has(k) ? std::stod(kv.at(k)) : d; }
};

}  // namespace attnlab::tools
