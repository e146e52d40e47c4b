/* Overlap policy per destination network (see target_policy.h). */
#include "target_policy.h"

#include <stdlib.h>
#include <string.h>

#include "errbuf.h"

void
ids_target_policy_init(struct ids_target_policy *tp)
{
	memset(tp, 0, sizeof(*tp));
	tp->dflt = IDS_POLICY_DEFAULT;
}

int
ids_target_policy_add(struct ids_target_policy *tp, const char *spec, const struct ac_vars *vars,
	char *err, size_t errlen)
{
	const char *eq = strrchr(spec, '=');
	const char *pname = eq ? eq + 1 : spec;
	int pol = ids_policy_parse(pname);

	if (pol < 0) {
		ac_set_err(err, errlen,
			"--target-policy '%s': unknown policy '%s' (first, last, bsd, linux, "
			"windows, solaris)",
			spec, pname);
		return -1;
	}
	if (eq == NULL) {
		tp->dflt = (uint8_t)pol;
		return 0;
	}
	char *net = strndup(spec, (size_t)(eq - spec));
	struct ids_target_net *ne = realloc(tp->e, (tp->n + 1) * sizeof(*ne));
	if (net == NULL || ne == NULL) {
		free(net);
		ac_set_err(err, errlen, "out of memory");
		return -1;
	}
	tp->e = ne;
	char why[256];
	if (net[0] == '\0' ||
		ac_netset_parse(&ne[tp->n].net, net, false, vars, why, sizeof(why)) < 0) {
		ac_set_err(err, errlen, "--target-policy '%s': %s", spec,
			net[0] ? why : "no network before '='");
		free(net);
		return -1;
	}
	ne[tp->n].policy = (uint8_t)pol;
	ne[tp->n].text = net;
	tp->n++;
	return 0;
}

void
ids_target_policy_free(struct ids_target_policy *tp)
{
	for (uint32_t i = 0; i < tp->n; i++) {
		ac_netset_free(&tp->e[i].net);
		free(tp->e[i].text);
	}
	free(tp->e);
	ids_target_policy_init(tp);
}
