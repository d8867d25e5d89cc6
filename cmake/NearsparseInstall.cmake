# Installs the library, its headers and a package config that re-finds its dependencies, so a
# consumer needs only find_package(nearsparse) and target_link_libraries(... nearsparse::nearsparse).
include(CMakePackageConfigHelpers)

install(TARGETS nearsparse EXPORT nearsparseTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/nearsparse"
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES "${PROJECT_BINARY_DIR}/include/nearsparse/config.hpp"
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/nearsparse)

set(NEARSPARSE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/nearsparse)
install(EXPORT nearsparseTargets NAMESPACE nearsparse:: DESTINATION ${NEARSPARSE_CMAKE_DIR})
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/nearsparseConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/nearsparseConfig.cmake"
                              INSTALL_DESTINATION ${NEARSPARSE_CMAKE_DIR})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/nearsparseConfigVersion.cmake"
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/nearsparseConfig.cmake"
              "${PROJECT_BINARY_DIR}/nearsparseConfigVersion.cmake"
        DESTINATION ${NEARSPARSE_CMAKE_DIR})
