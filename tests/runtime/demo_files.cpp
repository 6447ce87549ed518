// Input files for demo_program's tests, good and broken, and the check of
// its outputs (there is no NumPy on the test machines):
//   demo_files make DIR        writes a.npy, b.npy and one broken file per way
//                              a .npy file can be wrong
//   demo_files check DIR OUT   checks OUT/result{0,1,2}.npy against DIR/a.npy, b.npy
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

std::string header(const std::string &dict, int major = 1) {
  std::string text = dict;
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + text.size() + 1) % 64 != 0)
    text += ' ';
  text += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  out += static_cast<char>(text.size() & 0xff);
  out += static_cast<char>(text.size() >> 8);
  if (major != 1)
    out += std::string(2, '\0');
  return out + text;
}

std::string floats(const std::vector<float> &values) {
  return std::string(reinterpret_cast<const char *>(values.data()), values.size() * 4);
}

void write(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string read(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<float> valuesA() {
  std::vector<float> a;
  for (int i = 0; i < 15; ++i)
    a.push_back(static_cast<float>(i) + 0.25f);
  return a;
}

std::vector<float> valuesB() {
  std::vector<float> b;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 3; ++j)
      b.push_back(static_cast<float>(100 + 10 * i + j));
  return b;
}

const char *const kDict53 = "{'descr': '<f4', 'fortran_order': False, 'shape': (5, 3), }";

int make(const std::string &dir) {
  std::string a = header(kDict53) + floats(valuesA());
  write(dir + "/a.npy", a);
  write(dir + "/b.npy", header(kDict53, 2) + floats(valuesB())); // version 2.0 header
  write(dir + "/bad_magic.npy", "this is not an array\n");
  write(dir + "/f64.npy", header("{'descr': '<f8', 'fortran_order': False, 'shape': (5, 3), }") +
                              std::string(15 * 8, '\0'));
  write(dir + "/wrong_shape.npy",
        header("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 3), }") +
            std::string(12 * 4, '\0'));
  write(dir + "/truncated.npy", a.substr(0, a.size() - 8));
  write(dir + "/too_long.npy", a + "junk");
  write(dir + "/bad_header.npy",
        header("{'descr': '<f4', 'fortran_order': False, 'shape': (5, 3}") + floats(valuesA()));
  std::string future = a;
  future[6] = 9;
  write(dir + "/version9.npy", future);
  return 0;
}

int check(const std::string &out) {
  std::vector<float> a = valuesA(), b = valuesB();
  std::vector<float> sum(15), columns(3, 0);
  for (int i = 0; i < 15; ++i) {
    sum[i] = a[i] + b[i];
    columns[i % 3] += a[i];
  }
  std::vector<int32_t> order = {0, 1, 2, 3};
  std::string expected[] = {header(kDict53) + floats(sum),
                            header("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }") +
                                floats(columns),
                            header("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }") +
                                std::string(reinterpret_cast<const char *>(order.data()), 16)};
  int failures = 0;
  for (int i = 0; i < 3; ++i) {
    std::string path = out + "/result" + std::to_string(i) + ".npy";
    if (read(path) != expected[i]) {
      std::fprintf(stderr, "FAILED: %s differs from the expected array\n", path.c_str());
      ++failures;
    }
  }
  std::printf("demo outputs: %d of 3 as expected\n", 3 - failures);
  return failures ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 3 && std::strcmp(argv[1], "make") == 0)
    return make(argv[2]);
  if (argc == 4 && std::strcmp(argv[1], "check") == 0)
    return check(argv[3]);
  std::fprintf(stderr, "usage: demo_files make DIR | demo_files check DIR OUT\n");
  return 2;
}
