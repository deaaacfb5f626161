//! The congestion window of a segmented fetch: fixed, AIMD, or CUBIC (RFC 8312), grown on
//! each Data and cut on a timeout, a congestion Nack or an NDNLPv2 CongestionMark — at most
//! once per round trip, as ndncatchunks' conservative window adaptation does.

use std::time::{Duration, Instant};

/// Which window algorithm a fetch uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CcKind {
    /// Additive increase (slow start below the threshold), multiplicative decrease.
    Aimd,
    /// CUBIC's window growth after a decrease (RFC 8312).
    Cubic,
    /// A constant window.
    Fixed,
}

/// The default largest window, in Interests: under a forwarder's per-face output queue (Kite's
/// holds 1024 frames), since Data answered from a cache arrive as one burst per window.
pub const DEFAULT_MAX_WINDOW: f64 = 512.0;

/// The window's settings.
#[derive(Debug, Clone, Copy)]
pub struct CcOptions {
    /// The algorithm.
    pub kind: CcKind,
    /// The starting window (the whole window with [`CcKind::Fixed`]), in Interests.
    pub initial_window: f64,
    /// The largest window.
    pub max_window: f64,
    /// AIMD's additive increase per round trip.
    pub ai_step: f64,
    /// AIMD's multiplicative decrease factor.
    pub md_factor: f64,
    /// CUBIC's multiplicative decrease factor (beta).
    pub cubic_beta: f64,
    /// CUBIC's scaling constant C.
    pub cubic_c: f64,
}

impl Default for CcOptions {
    fn default() -> Self {
        CcOptions {
            kind: CcKind::Cubic,
            initial_window: 2.0,
            max_window: DEFAULT_MAX_WINDOW,
            ai_step: 1.0,
            md_factor: 0.5,
            cubic_beta: 0.7,
            cubic_c: 0.4,
        }
    }
}

/// The smallest window after a decrease.
const MIN_WINDOW: f64 = 1.0;

/// The congestion window.
#[derive(Debug, Clone)]
pub struct Window {
    opts: CcOptions,
    cwnd: f64,
    ssthresh: f64,
    /// When the window was last cut; Interests sent before it cannot cut it again.
    last_decrease: Option<Instant>,
    /// CUBIC's window just before the last cut.
    w_max: f64,
}

impl Window {
    /// A window at `opts.initial_window`, in slow start.
    pub fn new(opts: CcOptions) -> Self {
        let cwnd = opts.initial_window.clamp(MIN_WINDOW, opts.max_window);
        Window {
            opts,
            cwnd,
            ssthresh: f64::INFINITY,
            last_decrease: None,
            w_max: 0.0,
        }
    }

    /// The window, in Interests (fractional; send while outstanding < its floor).
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// How many Interests may be outstanding.
    pub fn allowed(&self) -> usize {
        self.cwnd.floor().max(MIN_WINDOW) as usize
    }

    /// Grows the window for one Data that came back at `now`; `srtt` is the smoothed RTT.
    pub fn on_data(&mut self, now: Instant, srtt: Duration) {
        match self.opts.kind {
            CcKind::Fixed => return,
            _ if self.cwnd < self.ssthresh => self.cwnd += self.opts.ai_step,
            CcKind::Aimd => self.cwnd += self.opts.ai_step / self.cwnd,
            CcKind::Cubic => self.cubic_increase(now, srtt),
        }
        self.cwnd = self.cwnd.min(self.opts.max_window);
    }

    /// RFC 8312's congestion avoidance: toward W_cubic(t + RTT), never slower than the
    /// TCP-friendly estimate.
    fn cubic_increase(&mut self, now: Instant, srtt: Duration) {
        let (c, beta) = (self.opts.cubic_c, self.opts.cubic_beta);
        let t = self
            .last_decrease
            .map_or(0.0, |d| now.saturating_duration_since(d).as_secs_f64());
        let rtt = srtt.as_secs_f64().max(1e-6);
        let k = (self.w_max * (1.0 - beta) / c).cbrt();
        let w_cubic = c * (t + rtt - k).powi(3) + self.w_max;
        let w_est = self.w_max * beta + 3.0 * (1.0 - beta) / (1.0 + beta) * (t / rtt);
        let target = w_cubic.max(w_est);
        if target > self.cwnd {
            self.cwnd += (target - self.cwnd) / self.cwnd;
        } else {
            // Plateau near W_max: creep up slowly.
            self.cwnd += 0.01 / self.cwnd;
        }
    }

    /// Cuts the window for a congestion signal about an Interest sent at `sent_at`, unless the
    /// window was already cut after that Interest left (same round trip). Returns whether it
    /// was cut.
    pub fn on_congestion(&mut self, sent_at: Instant, now: Instant) -> bool {
        if self.opts.kind == CcKind::Fixed || self.last_decrease.is_some_and(|d| sent_at <= d) {
            return false;
        }
        match self.opts.kind {
            CcKind::Cubic => {
                let beta = self.opts.cubic_beta;
                // Fast convergence: give up bandwidth faster when the window keeps shrinking.
                self.w_max = if self.cwnd < self.w_max {
                    self.cwnd * (1.0 + beta) / 2.0
                } else {
                    self.cwnd
                };
                self.ssthresh = (self.cwnd * beta).max(MIN_WINDOW);
            }
            _ => self.ssthresh = (self.cwnd * self.opts.md_factor).max(MIN_WINDOW),
        }
        self.cwnd = self.ssthresh;
        self.last_decrease = Some(now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(kind: CcKind) -> CcOptions {
        CcOptions {
            kind,
            initial_window: 4.0,
            max_window: 100.0,
            ..CcOptions::default()
        }
    }

    const RTT: Duration = Duration::from_millis(10);

    #[test]
    fn aimd_slow_start_then_halves_then_grows_one_per_window() {
        let t0 = Instant::now();
        let mut w = Window::new(opts(CcKind::Aimd));
        for _ in 0..4 {
            w.on_data(t0, RTT);
        }
        assert_eq!(w.cwnd(), 8.0, "slow start: +1 per Data");
        assert!(w.on_congestion(t0, t0 + RTT));
        assert_eq!(w.cwnd(), 4.0);
        for _ in 0..4 {
            w.on_data(t0, RTT);
        }
        // Congestion avoidance: four Data at a window of about 4 add about one.
        assert!((w.cwnd() - 4.0 - 1.0).abs() < 0.1, "{}", w.cwnd());
        assert_eq!(w.allowed(), 4);
    }

    #[test]
    fn one_cut_per_round_trip() {
        let t0 = Instant::now();
        let mut w = Window::new(opts(CcKind::Aimd));
        let cut_at = t0 + RTT;
        assert!(w.on_congestion(t0, cut_at));
        assert_eq!(w.cwnd(), 2.0);
        // Another loss of an Interest sent before the cut: same congestion event.
        assert!(!w.on_congestion(t0 + Duration::from_millis(5), cut_at + RTT));
        assert_eq!(w.cwnd(), 2.0);
        // An Interest sent after the cut may cut again.
        assert!(w.on_congestion(cut_at + Duration::from_millis(1), cut_at + RTT));
        assert_eq!(w.cwnd(), 1.0, "never below one");
    }

    #[test]
    fn window_stays_within_its_bounds() {
        let t0 = Instant::now();
        let mut w = Window::new(opts(CcKind::Aimd));
        for _ in 0..1000 {
            w.on_data(t0, RTT);
        }
        assert_eq!(w.cwnd(), 100.0);
        let mut f = Window::new(opts(CcKind::Fixed));
        f.on_data(t0, RTT);
        assert!(!f.on_congestion(t0, t0 + RTT));
        assert_eq!(f.cwnd(), 4.0);
    }

    #[test]
    fn cubic_cuts_by_beta_and_regrows_to_w_max_in_about_k() {
        let t0 = Instant::now();
        let mut w = Window::new(opts(CcKind::Cubic));
        for _ in 0..36 {
            w.on_data(t0, RTT);
        }
        assert_eq!(w.cwnd(), 40.0);
        assert!(w.on_congestion(t0, t0 + RTT));
        assert!((w.cwnd() - 28.0).abs() < 1e-9, "beta 0.7: {}", w.cwnd());
        // A long RTT keeps the TCP-friendly estimate below W_cubic.
        const LONG_RTT: Duration = Duration::from_millis(200);
        // K = cbrt(40 * 0.3 / 0.4) ≈ 3.1 s: well before K the window is below W_max, and
        // after it the window passes W_max.
        let cut = t0 + RTT;
        let mut at = cut;
        let step = Duration::from_millis(1);
        while at < cut + Duration::from_secs(2) {
            at += step;
            w.on_data(at, LONG_RTT);
        }
        assert!(w.cwnd() < 40.0, "before K: {}", w.cwnd());
        while at < cut + Duration::from_secs(4) {
            at += step;
            w.on_data(at, LONG_RTT);
        }
        assert!(w.cwnd() > 40.0, "after K: {}", w.cwnd());
    }
}
