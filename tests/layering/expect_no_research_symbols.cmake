# SPDX-License-Identifier: GPL-3.0-or-later
# Passes when the desktop application holds none of the research tools' functions while the
# command line (the control: the check can fail) holds every one of them.
#   cmake -DSTUDIO=<d2dpo-studio> -DCLI=<d2dpo> -P expect_no_research_symbols.cmake
set(symbols "d2dpo::reproduce(" "d2dpo::writeCurves(" "d2dpo::studySettings(" "d2dpo::measureSetting("
            "d2dpo::runSamplingStudy(")
foreach(binary STUDIO CLI)
    execute_process(COMMAND nm -C ${${binary}} RESULT_VARIABLE result OUTPUT_VARIABLE listing ERROR_VARIABLE error)
    if(NOT result EQUAL 0)
        message(FATAL_ERROR "nm ${${binary}} failed: ${error}")
    endif()
    foreach(symbol ${symbols})
        string(FIND "${listing}" "${symbol}" found)
        if(binary STREQUAL "STUDIO" AND NOT found EQUAL -1)
            message(FATAL_ERROR "d2dpo-studio holds ${symbol}: the desktop application links research/")
        elseif(binary STREQUAL "CLI" AND found EQUAL -1)
            message(FATAL_ERROR "the control failed: d2dpo holds no ${symbol} (stripped, or renamed?)")
        endif()
    endforeach()
endforeach()
message(STATUS "d2dpo-studio holds none of research/'s functions; d2dpo holds them all")
