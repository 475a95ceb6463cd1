// Package kubeapi is edgeovn's Kubernetes API client: typed clients and shared informers for
// the few API groups edgeovn reads and writes (core, apps, discovery, networking,
// coordination, authorization) and a dynamic client for custom resources, and the one place
// they are built from a kubeconfig (kubeconfig.go: loading, user agent, rate limits).
//
// Source (source.go) hands the daemon its clients once the kubeconfig exists and loads: on a
// k3s server's first boot edgeovn starts before k3s writes it, and a missing or broken file is
// waited out (logged), never an error that stops the node role. The node role, the election
// and the diagnostics (Load) share one client at 50 requests a second; the controller role has
// its own at 500 (its pod patches were capped by the shared one), custom resources theirs at 20.
//
// It exists for memory: client-go's Clientset, its informer factory and its leader election
// import every API group Kubernetes has, and registering them all at start-up kept about
// 14 MB more of the binary resident (measured by a program that imports only the packages,
// 18 against 32 MB). Here only the groups above are compiled in and registered.
//
// Invariants:
//   - The clients prefer protobuf for built-in types, as client-go's own typed clients do.
//   - An informer's watch stream that kube-apiserver closes early (it closes watchers that do
//     not keep up, ten to twenty-five times in a 500-pod burst on two cores) is re-opened at
//     once from the last resource version handed on (rewatch.go): client-go's reflector would
//     otherwise back off 0.8-1.6 s and list everything again after a "very short watch".
//   - An Informers starts each informer once, only those asked for before Start; Shutdown
//     returns once every started informer has stopped.
//   - Nothing in this package imports k8s.io/client-go/kubernetes or k8s.io/client-go/informers
//     (imports_test.go enforces it).
package kubeapi
