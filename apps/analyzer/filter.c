/* BPF filter compilation; see filter.h. */
#include "filter.h"

#include <stdio.h>

int
an_filter_compile(const char *expr, struct bpf_program *prog, char *err, size_t err_len)
{
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	if (dead == NULL) {
		snprintf(err, err_len, "pcap_open_dead failed");
		return -1;
	}
	int rc = pcap_compile(dead, prog, expr, 1, PCAP_NETMASK_UNKNOWN);
	if (rc != 0)
		snprintf(err, err_len, "%s", pcap_geterr(dead));
	pcap_close(dead);
	return rc == 0 ? 0 : -1;
}
