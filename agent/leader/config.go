package leader

import (
	"context"
	"crypto/tls"
	"log/slog"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/metrics"
)

// Config is what the election is configured with; package agent fills it from its Config in
// one place (agent/leaderconfig.go). It has no defaults of its own.
type Config struct {
	// NodeName is this host's identity in the Lease.
	NodeName string
	// LeaseNamespace and LeaseName name the coordination.k8s.io Lease campaigned for.
	LeaseNamespace, LeaseName string
	// LeaseDuration, RenewDeadline and RetryPeriod are client-go's timings, checked as its
	// NewLeaderElector does: duration > deadline > 1.2 × retry > 0.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Kubeconfig is the credentials file a recorded grant of the rights is bound to; ""
	// (in-cluster credentials): no grant is recorded.
	Kubeconfig string
	// RightsRecord is the file the last grant of the rights is kept in for the next process
	// (rightsrecord.go); "": none.
	RightsRecord string
	// NBEndpoints is OVN northbound, which must answer for this host to be eligible.
	NBEndpoints []string
	// Services and NetworkPolicy say which features are on: their informers' rights are
	// asked for too (rights.go).
	Services, NetworkPolicy bool
}

// Request is what Run campaigns with.
type Request struct {
	Config Config
	// Leases is the Lease API of Config.LeaseNamespace; Reviews asks the API server what
	// this host may do. *kubeapi.Client's Leases and SelfSubjectAccessReviews both fit.
	Leases  LeaseClient
	Reviews AccessReviewer
	// TLS is for ssl: northbound endpoints; nil when none is ssl:.
	TLS     *tls.Config
	Metrics *metrics.Metrics
	Log     *slog.Logger
	// Lead runs the controller role for one term; its context ends when the term does. An
	// error ends the term and gives the Lease up.
	Lead func(ctx context.Context) error
}

// LeaseClient is the Lease API the election needs: client-go's typed LeaseInterface and
// edgeovn's slim client both have it.
type LeaseClient interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*coordinationv1.Lease, error)
	Create(ctx context.Context, lease *coordinationv1.Lease, opts metav1.CreateOptions) (*coordinationv1.Lease, error)
	Update(ctx context.Context, lease *coordinationv1.Lease, opts metav1.UpdateOptions) (*coordinationv1.Lease, error)
}

// AccessReviewer asks the API server what this client may do: edgeovn's client and
// client-go's typed one (tests' fakes) both have it.
type AccessReviewer interface {
	Create(ctx context.Context, review *authorizationv1.SelfSubjectAccessReview, opts metav1.CreateOptions) (*authorizationv1.SelfSubjectAccessReview, error)
}
