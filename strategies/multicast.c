/* multicast: every eligible nexthop, each with its own retransmission suppression. */
#include "kite_strategy.h"

KITE_STRATEGY int multicast(struct kite_ctx *ctx)
{
	if (!kite_interest_event(ctx))
		return 0;
	__u64 *interval = (__u64 *)ctx->pit_scratch;
	__u64 cur = *interval ? *interval : 10000000ULL;
	int sent = 0, again = 0;
#pragma unroll
	for (int i = 0; i < KITE_MAX_NEXTHOPS; i++) {
		struct kite_nexthop *h = &ctx->nexthops[i];
		if (i >= ctx->nexthop_count)
			break;
		if (!(h->flags & KITE_NH_ELIGIBLE))
			continue;
		if (h->sent_ago_ns != KITE_NEVER) {
			if (h->sent_ago_ns < cur)
				continue;
			again = 1;
		}
		if (kite_forward_interest(h->face) == 0)
			sent++;
	}
	if (again) {
		cur *= 2;
		*interval = cur > 250000000ULL ? 250000000ULL : cur;
	}
	if (sent == 0 && ctx->upstream_count == 0)
		kite_return_nacks(KITE_NACK_NO_ROUTE);
	return 0;
}
