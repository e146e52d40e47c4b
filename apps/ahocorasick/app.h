/* The ahocorasick app as the runtime sees it. */
#ifndef AC_APP_H
#define AC_APP_H

#include "pp_app.h"

extern const struct pp_app ac_app;

#endif /* AC_APP_H */
