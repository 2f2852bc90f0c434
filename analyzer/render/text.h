/* Shared by the text renderer's files. */
#ifndef GA_REPORT_TEXT_H
#define GA_REPORT_TEXT_H

#include <stdio.h>

#include "model/report.h"






#endif
