/* roles.h - the role guess of a thread from its parks and name. */
#ifndef DIAL9_DECODER_ROLES_H
#define DIAL9_DECODER_ROLES_H

#include "analysis.h"

/* blocking pool: parks mostly on cond/futex/sem and is named like a pool,
 * or shares its name with another such thread of its process and never
 * parked on I/O; worker: an event loop (parks mostly in epoll/poll/select)
 * or named like one; then blocking pool by the shared name alone. */
enum d9_role d9_guess_role(const struct d9_summary *s, size_t i);

#endif
