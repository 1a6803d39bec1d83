/*
 * fureru: the whole public API in one include. Link with `pkg-config --cflags --libs fureru`.
 * Each header below is one module (docs/library.md lists them and the ABI policy).
 */
#ifndef FURERU_FURERU_H
#define FURERU_FURERU_H

#include "fureru/base.h"
#include "fureru/math.h"
#include "fureru/config.h"
#include "fureru/collision.h"
#include "fureru/contact.h"
#include "fureru/constraint.h"
#include "fureru/articulated.h"
#include "fureru/sparse.h"
#include "fureru/world.h"
#include "fureru/joints.h"
#include "fureru/control.h"
#include "fureru/urdf.h"
#include "fureru/haptic.h"
#include "fureru/coupling.h"
#include "fureru/device.h"
#include "fureru/devices.h"
#include "fureru/virtual.h"
#include "fureru/spidar.h"
#include "fureru/scene.h"
#include "fureru/server.h"

#endif
