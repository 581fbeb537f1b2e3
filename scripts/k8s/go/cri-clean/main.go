// Stops and removes every pod sandbox (and so every container) a CRI runtime holds: what
// `scripts/k8s.sh down` asks of the cluster's containerd after the kubelet, so that the runtime tears down
// each pod's network (CNI DEL: its address, veth and iptables rules) and unmounts its root filesystems
// before it stops. Usage: cri-clean <containerd socket path>
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: cri-clean <containerd socket path>")
		os.Exit(2)
	}
	conn, err := grpc.NewClient("unix://"+os.Args[1], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "cri-clean:", err)
		os.Exit(1)
	}
	defer conn.Close()
	runtime := runtimeapi.NewRuntimeServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	failed := false
	sandboxes, err := runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "cri-clean: listing pod sandboxes:", err)
		os.Exit(1)
	}
	for _, sandbox := range sandboxes.Items {
		if _, err := runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sandbox.Id}); err != nil {
			fmt.Fprintf(os.Stderr, "cri-clean: stopping sandbox %s: %v\n", sandbox.Id, err)
			failed = true
			continue
		}
		if _, err := runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sandbox.Id}); err != nil {
			fmt.Fprintf(os.Stderr, "cri-clean: removing sandbox %s: %v\n", sandbox.Id, err)
			failed = true
		}
	}
	fmt.Printf("removed %d pod sandbox(es)\n", len(sandboxes.Items))
	if failed {
		os.Exit(1)
	}
}
