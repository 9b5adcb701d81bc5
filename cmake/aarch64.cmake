# Cross-compiles for aarch64 with Debian's cross toolchain (g++-aarch64-linux-gnu) against the arm64 multiarch
# packages (dpkg --add-architecture arm64; libopenblas-dev:arm64, libfmt-dev:arm64, ...), which live in the
# host's /usr under the aarch64-linux-gnu triplet. tools/arm_check.sh installs them and uses this file:
#   cmake -S . -B build-arm -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64.cmake
# ctest then runs each test binary under qemu-aarch64 (CMAKE_CROSSCOMPILING_EMULATOR).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Libraries and their CMake package files are searched in /usr/lib/aarch64-linux-gnu (never the host's
# x86_64 directory); architecture-independent packages (doctest, nlohmann-json) are found in /usr as usual.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# The arm64 loader and libc come with the multiarch libraries (libc6:arm64, in the host's /lib), so qemu needs
# no -L: `-L /usr/aarch64-linux-gnu` paired the cross toolchain's loader with that libc, of another Debian
# revision, and thread creation then hung.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
