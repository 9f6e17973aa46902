# tenure_pc.cmake: writes tenure.pc when tenure is installed (install(CODE) in CMakeLists.txt
# sets the TENURE_PC_* variables first), for the prefix of that install: `cmake --install
# --prefix P` and CMAKE_INSTALL_PREFIX alike. libdir and includedir are the install's own
# (Debian's lib/x86_64-linux-gnu included), written under ${prefix} when relative, as given
# when absolute. DESTDIR stages the file and does not enter it: a DESTDIR=/tmp/stage install
# to /usr says -I/usr/include. file(INSTALL) adds DESTDIR and lists the file in the manifest.
set(TENURE_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${TENURE_PC_INSTALL_${dir}}")
    set(TENURE_PC_${dir} "${TENURE_PC_INSTALL_${dir}}")
    set(full_${dir} "${TENURE_PC_INSTALL_${dir}}")
  else()
    set(TENURE_PC_${dir} "\${prefix}/${TENURE_PC_INSTALL_${dir}}")
    set(full_${dir} "${CMAKE_INSTALL_PREFIX}/${TENURE_PC_INSTALL_${dir}}")
  endif()
endforeach()
configure_file("${TENURE_PC_IN}" "${TENURE_PC_OUT}" @ONLY)
file(INSTALL DESTINATION "${full_LIBDIR}/pkgconfig" TYPE FILE FILES "${TENURE_PC_OUT}")
