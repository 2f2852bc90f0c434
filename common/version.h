/* The version of the whole project: the launcher and gputrace-report print it (--version), the
 * JSON report names it in "generator", the manual pages' .TH lines carry it (tests/cases/version.sh
 * and manpages.sh check all of them). */
#ifndef GT_COMMON_VERSION_H
#define GT_COMMON_VERSION_H

#define GT_VERSION "0.1.0"

#endif
