# SPDX-License-Identifier: GPL-3.0-or-later
# Builds one probe target that includes a header its layer must not see, and passes only when
# the build fails because that header cannot be found (not for any other reason).
#   cmake -DBUILD_DIR=... -DTARGET=... -DHEADER=... -P expect_include_refused.cmake
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(result EQUAL 0)
    message(FATAL_ERROR "${TARGET} compiled: the layer can include ${HEADER}, which it must not")
endif()
string(FIND "${output}" "${HEADER}: No such file or directory" found)
if(found EQUAL -1)
    message(FATAL_ERROR "${TARGET} failed for another reason than the refused include of ${HEADER}:\n${output}")
endif()
message(STATUS "${TARGET}: ${HEADER} is out of reach, as it must be")
