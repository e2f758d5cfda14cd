// Loads libfailslow_inject.so the way the CUDA driver does (dlopen, then InitializeInjection)
// and checks that it returns 1 and leaves the process running -- on a machine without a GPU
// too, where it must only say that it is not capturing.
//   example_inject_load /path/to/libfailslow_inject.so
#include <dlfcn.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s libfailslow_inject.so\n", argv[0]);
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  using init_fn = int (*)();
  auto init = reinterpret_cast<init_fn>(dlsym(lib, "InitializeInjection"));
  if (!init) {
    std::fprintf(stderr, "InitializeInjection not exported\n");
    return 1;
  }
  const int first = init();
  const int second = init();  // the driver calls it once; a second call must be harmless
  std::printf("InitializeInjection returned %d, then %d\n", first, second);
  return first == 1 && second == 1 ? 0 : 1;
}
