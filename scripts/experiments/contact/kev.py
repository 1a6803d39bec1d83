import sys, cmath
def mat(v): return [v[0:3],v[3:6],v[6:9]]
def mm(a,b): return [[sum(a[i][k]*b[k][j] for k in range(3)) for j in range(3)] for i in range(3)]
def inv(a):
    (a0,a1,a2),(b0,b1,b2),(c0,c1,c2)=a
    det=a0*(b1*c2-b2*c1)-a1*(b0*c2-b2*c0)+a2*(b0*c1-b1*c0)
    co=[[b1*c2-b2*c1, -(a1*c2-a2*c1), a1*b2-a2*b1],[-(b0*c2-b2*c0), a0*c2-a2*c0, -(a0*b2-a2*b0)],[b0*c1-b1*c0, -(a0*c1-a1*c0), a0*b1-a1*b0]]
    return [[co[i][j]/det for j in range(3)] for i in range(3)]
def eig(a):
    tr=a[0][0]+a[1][1]+a[2][2]
    m2=sum(a[i][i]*a[j][j]-a[i][j]*a[j][i] for i in range(3) for j in range(i+1,3))
    (a0,a1,a2),(b0,b1,b2),(c0,c1,c2)=a
    det=a0*(b1*c2-b2*c1)-a1*(b0*c2-b2*c0)+a2*(b0*c1-b1*c0)
    f=lambda x: x**3-tr*x**2+m2*x-det
    r=[complex(0.4,0.9)**i*(abs(tr)+1) for i in range(3)]
    for _ in range(500):
        r=[r[i]-f(r[i])/((r[i]-r[(i+1)%3])*(r[i]-r[(i+2)%3])) for i in range(3)]
    return [complex(round(x.real,4),round(x.imag,4)) for x in r]
G=DK=KL=None; dt=None
for line in sys.stdin:
    w=line.split()
    if not w: continue
    if w[0]=='G': G=mat(list(map(float,w[1:])))
    elif w[0]=='DK': DK=mat(list(map(float,w[1:])))
    elif w[0]=='KL': KL=mat(list(map(float,w[1:])))
    elif w[0]=='dt': dt=float(w[1])
    elif line.startswith('  fresh') or line.startswith('settle') or line.startswith('block'): print(line.rstrip())
def gen(K): return [[-x for x in K[2]],[x for x in K[1]],[-x for x in K[0]]]
Gi=inv(G)
s=lambda M:[[dt*dt*x for x in row] for row in M]
print("eig dt2 G^-1 KL:", eig(s(mm(Gi,gen(KL)))))
print("eig dt2 G^-1 DK:", eig(s(mm(Gi,gen(DK)))))
