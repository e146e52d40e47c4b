/* Packets libpcap reads from each capture (as DPDK's net_pcap reads them:
 * pcap_next_ex until it stops), one "PATH<TAB>N" line per argument; N is -1
 * when libpcap cannot open the file.  Used by the end-to-end tests to check
 * that every packet of every capture went through the app.
 *
 * With --cat OUT.pcap first, the packets are also written, in argument
 * order, to one Ethernet pcap: the reference check runs the app and the
 * Python reference on the same bytes, and a flow that continues from one
 * capture into the next is judged alike by both. */
#include <stdio.h>
#include <string.h>

#include <pcap/pcap.h>

int
main(int argc, char **argv)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	pcap_t *dead = NULL;
	pcap_dumper_t *out = NULL;
	int first = 1;

	if (argc > 2 && strcmp(argv[1], "--cat") == 0) {
		/* Ethernet: the app reads every frame as Ethernet, whatever the
		 * capture's link type said. */
		dead = pcap_open_dead(DLT_EN10MB, 262144);
		out = dead ? pcap_dump_open(dead, argv[2]) : NULL;
		if (out == NULL) {
			fprintf(stderr, "ac_pcap_count: cannot write '%s': %s\n", argv[2],
				dead ? pcap_geterr(dead) : "out of memory");
			return 1;
		}
		first = 3;
	}
	for (int i = first; i < argc; i++) {
		pcap_t *p = pcap_open_offline(argv[i], errbuf);
		struct pcap_pkthdr *h;
		const u_char *d;
		long n = 0;

		if (p == NULL) {
			printf("%s\t-1\n", argv[i]);
			continue;
		}
		while (pcap_next_ex(p, &h, &d) == 1) {
			if (out != NULL)
				pcap_dump((u_char *)out, h, d);
			n++;
		}
		pcap_close(p);
		printf("%s\t%ld\n", argv[i], n);
	}
	if (out != NULL) {
		if (pcap_dump_flush(out) != 0) {
			fprintf(stderr, "ac_pcap_count: cannot write '%s'\n", argv[2]);
			return 1;
		}
		pcap_dump_close(out);
		pcap_close(dead);
	}
	return 0;
}
