/* best-route: the lowest-cost eligible nexthop; a retransmission past suppression goes to a
 * nexthop not tried yet, else to the one tried longest ago; nothing eligible: Nack~NoRoute. */
#include "kite_strategy.h"

KITE_STRATEGY int best_route(struct kite_ctx *ctx)
{
	if (!kite_interest_event(ctx))
		return 0;
	int decision = kite_retx_decide(ctx);
	if (decision == KITE_RETX_SUPPRESS)
		return 0;
	__u64 best = 0, oldest = 0, oldest_ago = 0;
	int found = 0, found_oldest = 0;
#pragma unroll
	for (int i = 0; i < KITE_MAX_NEXTHOPS; i++) {
		struct kite_nexthop *h = &ctx->nexthops[i];
		if (i >= ctx->nexthop_count)
			break;
		if (!(h->flags & KITE_NH_ELIGIBLE))
			continue;
		if (decision == KITE_RETX_NEW || !(h->flags & KITE_NH_TRIED)) {
			best = h->face;
			found = 1;
			break;
		}
		if (!found_oldest || h->sent_ago_ns > oldest_ago) {
			oldest = h->face;
			oldest_ago = h->sent_ago_ns;
			found_oldest = 1;
		}
	}
	if (found)
		kite_forward_interest(best);
	else if (found_oldest)
		kite_forward_interest(oldest);
	else if (decision == KITE_RETX_NEW)
		kite_return_nacks(KITE_NACK_NO_ROUTE);
	return 0;
}
