/* What DPDK 22.11's net_pcap will do to the frames of the captures it is
 * given (--vdev net_pcapN,rx_pcap=FILE), found before the port starts and
 * said once on stderr, so no frame is cut without a word.
 *
 * eth_pcap_rx() copies a frame of captured length C longer than an mbuf
 * through eth_pcap_rx_jumbo(), whose length is a uint16_t: x = C mod 65536.
 * With T the tailroom of a fresh mbuf (--mbuf-size) it first fills T bytes,
 * then copies (x - T) mod 65536 more, so the chain holds
 *   C            when C <= T or C < 65536;
 *   x + 65536    when x < T  (C itself when C < 131072);
 *   x            when x >= T.
 * pkt_len is C (32 bits since "net/pcap: fix blocking Rx", in 22.11 stable
 * and Debian's 22.11.11; 22.11.0 cut it to 16 bits as well), so every cut
 * frame reaches R with segments short of pkt_len: R repairs pkt_len to what
 * the chain holds and counts it (rx_chains_repaired).  The wire length is
 * never read: a frame the capture itself truncated arrives as captured.
 * With infinite_rx the PMD refuses any frame longer than T at queue set-up. */
#include "pp_pcap_check.h"

#include <inttypes.h>
#include <limits.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define PCAP_LEN_WRAP 65536u

void
pp_pcap_classify(struct pp_pcap_frames *f, uint32_t caplen, unsigned tailroom, bool infinite)
{
	f->frames++;
	if (caplen > f->longest)
		f->longest = caplen;
	if (caplen <= tailroom)
		return;
	if (infinite)
		f->refused_infinite++; /* the PMD checks this at queue set-up */
	if (caplen < PCAP_LEN_WRAP)
		return;
	uint32_t x = caplen % PCAP_LEN_WRAP;
	if (x < tailroom && caplen < 2 * PCAP_LEN_WRAP)
		return;
	f->cut++;
	if (caplen < 2 * PCAP_LEN_WRAP && x + 1 > f->tailroom_needed)
		f->tailroom_needed = x + 1;
	else if (caplen >= 2 * PCAP_LEN_WRAP)
		f->cut_any_tailroom++;
}

static int
scan_file(const char *vdev, const char *path, unsigned tailroom, bool infinite, const char *who,
	struct pp_pcap_frames *f)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, err);
	if (p == NULL)
		return -1; /* net_pcap says why when it opens the file */
	struct pcap_pkthdr *h;
	const u_char *data;
	int rc;
	while ((rc = pcap_next_ex(p, &h, &data)) == 1)
		pp_pcap_classify(f, h->caplen, tailroom, infinite);
	/* net_pcap stops at the first error too, without a word: say it here */
	if (rc == PCAP_ERROR && f->frames == 0)
		fprintf(stderr,
			"%s: %s rx_pcap=%s: broken at its first frame (%s): nothing is replayed\n",
			who, vdev, path, pcap_geterr(p));
	else if (rc == PCAP_ERROR)
		fprintf(stderr,
			"%s: %s rx_pcap=%s: broken after frame %" PRIu64 " (%s): only the %" PRIu64
			" frames before it are replayed\n",
			who, vdev, path, f->frames, pcap_geterr(p), f->frames);
	else if (f->frames == 0)
		fprintf(stderr,
			"%s: %s rx_pcap=%s: the capture holds no frame: the port receives "
			"nothing\n",
			who, vdev, path);
	pcap_close(p);
	return 0;
}

static void
report(const char *vdev, const char *path, const struct pp_pcap_frames *f, unsigned tailroom,
	bool infinite, const char *who)
{
	if (infinite && f->refused_infinite > 0) {
		fprintf(stderr,
			"%s: %s rx_pcap=%s: %" PRIu64 " of %" PRIu64 " frames are longer than an "
			"mbuf (--mbuf-size %u) and net_pcap's infinite_rx refuses frames over "
			"several mbufs: the port will not start; ",
			who, vdev, path, f->refused_infinite, f->frames, tailroom);
		if (f->longest <= PP_PCAP_MAX_TAILROOM)
			fprintf(stderr, "give --mbuf-size %" PRIu32 " or more\n", f->longest);
		else
			fprintf(stderr,
				"the longest, %" PRIu32 " bytes, cannot fit one mbuf (at most %u): "
				"replay it without infinite_rx\n",
				f->longest, PP_PCAP_MAX_TAILROOM);
		return;
	}
	if (f->cut == 0)
		return;
	fprintf(stderr,
		"%s: %s rx_pcap=%s: %" PRIu64 " of %" PRIu64 " frames are over 64 KiB and will "
		"reach the app cut (DPDK 22.11 net_pcap keeps the captured length in 16 bits)",
		who, vdev, path, f->cut, f->frames);
	if (f->cut_any_tailroom == 0 && f->tailroom_needed <= PP_PCAP_MAX_TAILROOM)
		fprintf(stderr, "; --mbuf-size %u or more receives them whole\n",
			f->tailroom_needed);
	else
		fprintf(stderr,
			"; no --mbuf-size receives them all whole (%" PRIu64
			" are 128 KiB or longer; an mbuf holds at most %u bytes)\n",
			f->cut_any_tailroom, PP_PCAP_MAX_TAILROOM);
}

/* One --vdev value: "net_pcap0,rx_pcap=a,rx_pcap=b,infinite_rx=1". */
static void
check_vdev(const char *value, unsigned tailroom, const char *who, struct pp_pcap_frames *total)
{
	if (strncmp(value, "net_pcap", 8) != 0 && strncmp(value, "eth_pcap", 8) != 0)
		return;
	char buf[PATH_MAX * 4];
	if (strlen(value) >= sizeof(buf))
		return;
	strcpy(buf, value);
	bool infinite = strstr(value, "infinite_rx=1") != NULL;
	char *save = NULL;
	const char *name = strtok_r(buf, ",", &save);
	for (char *kv = strtok_r(NULL, ",", &save); kv != NULL; kv = strtok_r(NULL, ",", &save)) {
		if (strncmp(kv, "rx_pcap=", 8) != 0)
			continue;
		struct pp_pcap_frames f = { 0 };
		if (scan_file(name, kv + 8, tailroom, infinite, who, &f) < 0)
			continue;
		report(name, kv + 8, &f, tailroom, infinite, who);
		total->frames += f.frames;
		total->cut += f.cut;
		total->refused_infinite += f.refused_infinite;
	}
}

void
pp_pcap_check(
	int argc, char **argv, unsigned tailroom, const char *who, struct pp_pcap_frames *total)
{
	memset(total, 0, sizeof(*total));
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--vdev") == 0 && i + 1 < argc)
			check_vdev(argv[++i], tailroom, who, total);
		else if (strncmp(argv[i], "--vdev=", 7) == 0)
			check_vdev(argv[i] + 7, tailroom, who, total);
	}
}
