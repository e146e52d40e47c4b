/* Packets libpcap reads from each capture (as DPDK's net_pcap reads them:
 * pcap_next_ex until it stops), one "PATH<TAB>N" line per argument; N is -1
 * when libpcap cannot open the file.  Used by the end-to-end test to check
 * that every packet of every capture went through the app. */
#include <stdio.h>

#include <pcap/pcap.h>

int
main(int argc, char **argv)
{
	char errbuf[PCAP_ERRBUF_SIZE];

	for (int i = 1; i < argc; i++) {
		pcap_t *p = pcap_open_offline(argv[i], errbuf);
		struct pcap_pkthdr *h;
		const u_char *d;
		long n = 0;

		if (p == NULL) {
			printf("%s\t-1\n", argv[i]);
			continue;
		}
		while (pcap_next_ex(p, &h, &d) == 1)
			n++;
		pcap_close(p);
		printf("%s\t%ld\n", argv[i], n);
	}
	return 0;
}
