/* Which stack a destination runs, for the overlap policies (overlap.h):
 * --target-policy POLICY sets the default (linux unless given), and
 * --target-policy NET=POLICY a network's, NET in rule header syntax
 * (address[/bits], IPv4 or IPv6, lists, $VARS).  Networks are tried in
 * the order given; the first that holds the destination wins. */
#ifndef IDS_TARGET_POLICY_H
#define IDS_TARGET_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "overlap.h"
#include "rule_vars.h"

struct ids_target_policy {
	struct ids_target_net {
		struct ac_netset net;
		uint8_t policy;
		char *text;
	} * e;
	uint32_t n;
	uint8_t dflt;
};

void ids_target_policy_init(struct ids_target_policy *tp);
/* 0, or -1 with err naming spec. */
int ids_target_policy_add(struct ids_target_policy *tp, const char *spec,
	const struct ac_vars *vars, char *err, size_t errlen);
void ids_target_policy_free(struct ids_target_policy *tp);

static inline uint8_t
ids_target_policy_of(const struct ids_target_policy *tp, ac_addr dst)
{
	for (uint32_t i = 0; i < tp->n; i++)
		if (ac_netset_has(&tp->e[i].net, dst))
			return tp->e[i].policy;
	return tp->dflt;
}

#endif /* IDS_TARGET_POLICY_H */
