/* sarbp/sarbp.h - umbrella header for the sarbp library. */
#ifndef SARBP_SARBP_H
#define SARBP_SARBP_H

#include "sarbp/version.h" /* SARBP_VERSION, generated from CMake project(VERSION) */
#include "sarbp/status.h"
#include "sarbp/host.h"
#include "sarbp/phd.h"
#include "sarbp/phd_io.h"
#include "sarbp/window.h"
#include "sarbp/rangecomp.h"
#include "sarbp/grid.h"
#include "sarbp/image.h"
#include "sarbp/backproject.h"
#include "sarbp/ffbp.h"
#include "sarbp/cuda_variants.h"
#include "sarbp/session.h"
#include "sarbp/form.h"
#include "sarbp/autofocus.h"
#include "sarbp/simulate.h"
#include "sarbp/progress.h"
#include "sarbp/quality.h"
#include "sarbp/geo.h"
#include "sarbp/terrain.h"

#endif
