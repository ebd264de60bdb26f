# SPDX-License-Identifier: GPL-3.0-or-later
# `cpack -G DEB` in the build folder makes a .deb with what `install()` names: d2dpo-studio, d2dpo,
# the .desktop entry, the icon and the licence. Dependencies come from dpkg-shlibdeps.
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "d2dpo-studio")
set(CPACK_PACKAGE_CONTACT "d2dpo-studio maintainers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# LibTorch calls BLAS through libblas.so.3; the OpenMP OpenBLAS is many times faster than the reference one.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libopenblas0-openmp")
include(CPack)
